package io.asymnvm.core.fabric.tcp;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.fabric.NicSession;
import io.asymnvm.core.layout.FrameLayout;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The responder of the TCP fabric: an "emulated NIC" that decodes {@link FrameLayout} frames and executes them
 * through {@link EmulatedNic}, replying in request order. A malformed frame or an unknown type gets an error
 * reply with a stable code and the connection keeps serving; only a frame whose length field cannot be
 * trusted (beyond {@link FrameLayout#MAX_FRAME_LENGTH}) closes that one connection. Other connections are never
 * affected.
 */
public final class TcpNicServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TcpNicServer.class);

    private final EmulatedNic nic;
    private final InetSocketAddress bindAddress;
    private final TcpTls tls;
    private EventLoopGroup boss;
    private EventLoopGroup workers;
    private Channel serverChannel;

    public TcpNicServer(EmulatedNic nic, InetSocketAddress bindAddress) {
        this(nic, bindAddress, null);
    }

    /** With {@code tls} (null: plain tcp), every connection runs through TLS first ({@link TcpTls}). */
    public TcpNicServer(EmulatedNic nic, InetSocketAddress bindAddress, TcpTls tls) {
        if (tls != null && tls.isClient()) {
            throw new IllegalArgumentException("client TLS settings given to a server");
        }
        this.nic = nic;
        this.bindAddress = bindAddress;
        this.tls = tls;
    }

    /** Binds and starts serving; fails with a message naming the address if the port is taken. */
    public synchronized TcpNicServer start() {
        boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        workers = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            serverChannel = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(NioServerSocketChannel.class)
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            TcpTls.installServer(tls, ch);
                            ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(ByteOrder.LITTLE_ENDIAN,
                                    FrameLayout.MAX_FRAME_LENGTH, 0, FrameLayout.LENGTH_FIELD_LENGTH, 0,
                                    FrameLayout.LENGTH_FIELD_LENGTH, true));
                            ch.pipeline().addLast(new NicHandler());
                        }
                    })
                    .bind(bindAddress).sync().channel();
        } catch (Exception e) {
            close();
            throw new IllegalArgumentException("cannot listen on " + bindAddress + ": " + e.getMessage(), e);
        }
        LOG.info("emulated NIC listening on {}", serverChannel.localAddress());
        return this;
    }

    public int port() {
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    @Override
    public synchronized void close() {
        if (serverChannel != null) {
            serverChannel.close().syncUninterruptibly();
            serverChannel = null;
        }
        if (boss != null) {
            boss.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
            workers.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
            boss = null;
            workers = null;
        }
    }

    private final class NicHandler extends ChannelInboundHandlerAdapter {
        private final NicSession session = new NicSession();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            try {
                ctx.write(execute(ctx, frame));
            } finally {
                frame.release();
            }
        }

        private ByteBuf execute(ChannelHandlerContext ctx, ByteBuf f) {
            try {
                if (f.readableBytes() < FrameLayout.REQUEST_HEADER_LENGTH) {
                    throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "frame of " + f.readableBytes()
                            + " bytes is shorter than the " + FrameLayout.REQUEST_HEADER_LENGTH + "-byte header");
                }
                int base = f.readerIndex();
                byte type = f.getByte(base + FrameLayout.TYPE_OFFSET);
                int region = f.getIntLE(base + FrameLayout.REGION_OFFSET);
                long offset = f.getLongLE(base + FrameLayout.ADDRESS_OFFSET);
                long arg1 = f.getLongLE(base + FrameLayout.ARG1_OFFSET);
                long arg2 = f.getLongLE(base + FrameLayout.ARG2_OFFSET);
                int payloadAt = base + FrameLayout.REQUEST_HEADER_LENGTH;
                int payloadLength = f.readableBytes() - FrameLayout.REQUEST_HEADER_LENGTH;
                switch (type) {
                    case FrameLayout.REQ_READ -> {
                        if (arg1 < 0 || arg1 > FrameLayout.MAX_READ_LENGTH) {
                            throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "read length " + arg1
                                    + " outside [0, " + FrameLayout.MAX_READ_LENGTH + "]");
                        }
                        return response(ctx, FrameLayout.RESP_DATA, 0, 0, 0,
                                nic.read(session, region, offset, (int) arg1));
                    }
                    case FrameLayout.REQ_WRITE -> {
                        nic.write(session, region, offset, f.nioBuffer(payloadAt, payloadLength));
                        return response(ctx, FrameLayout.RESP_ACK, 0, 0, 0, null);
                    }
                    case FrameLayout.REQ_CAS -> {
                        long witness = nic.compareAndSwap(session, region, offset, arg1, arg2);
                        return response(ctx, FrameLayout.RESP_ACK, 0, witness, 0, null);
                    }
                    case FrameLayout.REQ_FLUSH -> {
                        long[] r = nic.flush(session, arg1, arg2 == 1);
                        return response(ctx, FrameLayout.RESP_ACK, 0, r[0], r[1], null);
                    }
                    case FrameLayout.REQ_CONTROL -> {
                        byte[] request = new byte[payloadLength];
                        f.getBytes(payloadAt, request);
                        return response(ctx, FrameLayout.RESP_DATA, 0, 0, 0, nic.control(session, request));
                    }
                    default -> throw new AsymNvmException(ErrorCode.UNKNOWN_FRAME_TYPE,
                            "unknown frame type " + type);
                }
            } catch (AsymNvmException e) {
                return error(ctx, e.errorCode(), e.getMessage());
            } catch (RuntimeException e) {
                LOG.warn("request failed on session {}", session.id(), e);
                return error(ctx, ErrorCode.UNKNOWN, e.toString());
            }
        }

        private ByteBuf error(ChannelHandlerContext ctx, ErrorCode code, String message) {
            return response(ctx, FrameLayout.RESP_ERROR, code.code(), 0, 0,
                    String.valueOf(message).getBytes(StandardCharsets.UTF_8));
        }

        private ByteBuf response(ChannelHandlerContext ctx, byte type, int code, long v1, long v2, byte[] payload) {
            int payloadLength = payload == null ? 0 : payload.length;
            ByteBuf out = ctx.alloc().buffer(FrameLayout.LENGTH_FIELD_LENGTH + FrameLayout.RESPONSE_HEADER_LENGTH
                    + payloadLength);
            out.writeIntLE(FrameLayout.RESPONSE_HEADER_LENGTH + payloadLength);
            out.writeByte(type).writeByte(0).writeShort(0);
            out.writeIntLE(code);
            out.writeLongLE(v1);
            out.writeLongLE(v2);
            if (payload != null) {
                out.writeBytes(payload);
            }
            return out;
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            nic.closed(session);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof TooLongFrameException) {
                ctx.writeAndFlush(error(ctx, ErrorCode.MALFORMED_FRAME, cause.getMessage()));
                LOG.warn("closing {}: {}", ctx.channel().remoteAddress(), cause.getMessage());
            } else {
                LOG.debug("connection {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
            }
            ctx.close();
        }
    }
}
