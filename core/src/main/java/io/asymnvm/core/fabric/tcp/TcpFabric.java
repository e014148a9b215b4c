package io.asymnvm.core.fabric.tcp;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.FabricCounters;
import io.asymnvm.core.layout.FrameLayout;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;

import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The requester side of the TCP fabric. Each connection is one socket; requests are written in posting order
 * and responses matched to completions first-in first-out. A closed socket fails every pending completion with
 * {@code CONNECTION_LOST}.
 */
public final class TcpFabric implements Fabric {
    private static final int CONNECT_TIMEOUT_MILLIS = 2_000;

    private final String host;
    private final int port;
    private final TcpTls tls;
    private final TcpTransport transport;
    private final long loopSpinNanos;
    private final EventLoopGroup group;

    public TcpFabric(String host, int port) {
        this(host, port, null);
    }

    /** With {@code tls} (client settings; null: plain tcp), each connection completes a TLS handshake first. */
    public TcpFabric(String host, int port, TcpTls tls) {
        this(host, port, tls, false);
    }

    /**
     * As {@link #TcpFabric(String, int, TcpTls)}; {@code spinningCallers}: the callers busy-poll their completions
     * ({@link io.asymnvm.core.fabric.WaitPolicy.Kind#SPIN}), so the event loop that reads the replies polls too, for
     * {@link TcpTransport#clientSpinNanos()} after its last event, instead of sleeping in {@code epoll_wait}
     * between a request and its reply. The transport and the windows come from {@link TcpTransport#fromProperties()}.
     */
    public TcpFabric(String host, int port, TcpTls tls, boolean spinningCallers) {
        this(host, port, tls, TcpTransport.fromProperties(), spinningCallers);
    }

    /** As above, on {@code transport}. */
    public TcpFabric(String host, int port, TcpTls tls, TcpTransport transport, boolean spinningCallers) {
        if (tls != null && !tls.isClient()) {
            throw new IllegalArgumentException("server TLS settings given to a client");
        }
        this.tls = tls;
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port out of range [1, 65535]: " + port);
        }
        this.host = host;
        this.port = port;
        this.transport = java.util.Objects.requireNonNull(transport, "transport");
        this.loopSpinNanos = spinningCallers ? transport.clientSpinNanos() : 0;
        this.group = new MultiThreadIoEventLoopGroup(1, transport.ioHandlerFactory(loopSpinNanos));
    }

    /** The transport that runs: {@code epoll} or {@code nio}. */
    public String transport() {
        return transport.name();
    }

    /** How long the reply-reading loop polls after its last event, in ns (0: it blocks at once). */
    public long loopSpinNanos() {
        return loopSpinNanos;
    }

    @Override
    public String name() {
        return "tcp";
    }

    /** Connects; a refused or timed-out connect throws {@code CONNECTION_LOST} naming the address. */
    @Override
    public FabricConnection connect() {
        TcpConnection conn = new TcpConnection();
        boolean direct = tls == null && DirectWriter.ENABLED;
        try {
            Channel ch = new Bootstrap().group(group)
                    .channelFactory(transport.clientChannel(direct)) // plain: the posting thread writes
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MILLIS)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel c) {
                            TcpTls.installClient(tls, c, host, port);
                            c.pipeline().addLast(new LengthFieldBasedFrameDecoder(ByteOrder.LITTLE_ENDIAN,
                                    FrameLayout.MAX_FRAME_LENGTH, 0, FrameLayout.LENGTH_FIELD_LENGTH, 0,
                                    FrameLayout.LENGTH_FIELD_LENGTH, true));
                            c.pipeline().addLast(conn.handler);
                        }
                    })
                    .connect(host, port).syncUninterruptibly().channel();
            if (tls != null) {
                awaitHandshake(ch);
            }
            conn.writer = new DirectWriter(ch, direct);
            conn.channel = ch;
            return conn;
        } catch (Exception e) {
            throw new AsymNvmException(ErrorCode.CONNECTION_LOST, "cannot connect to " + host + ":" + port
                    + ": " + e.getMessage(), e);
        }
    }

    private void awaitHandshake(Channel ch) {
        io.netty.util.concurrent.Future<Channel> handshake =
                ch.pipeline().get(io.netty.handler.ssl.SslHandler.class).handshakeFuture();
        if (!handshake.awaitUninterruptibly(CONNECT_TIMEOUT_MILLIS) || !handshake.isSuccess()) {
            ch.close();
            Throwable cause = handshake.cause();
            throw new AsymNvmException(ErrorCode.CONNECTION_LOST, "TLS handshake with " + host + ":" + port
                    + " failed: " + (cause == null ? "timed out" : cause.getMessage()), cause);
        }
    }

    @Override
    public void close() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static final class TcpConnection implements FabricConnection {
        private final FabricCounters counters = new FabricCounters();
        private final ArrayDeque<Pending> pending = new ArrayDeque<>();
        private final Handler handler = new Handler();
        private volatile Channel channel;
        /** Writes posted frames, from the posting thread when it can; used under the {@code pending} lock. */
        private volatile DirectWriter writer;
        private volatile boolean open = true;

        private record Pending(Completion completion, boolean flush) {
        }

        private Completion post(byte type, int region, long offset, long arg1, long arg2, byte[] payload,
                                int payloadOffset, int payloadLength) {
            Completion c = new Completion(counters);
            if (payloadLength > FrameLayout.MAX_REQUEST_PAYLOAD) {
                c.fail(new AsymNvmException(ErrorCode.BAD_REQUEST, "payload of " + payloadLength
                        + " bytes exceeds the frame limit " + FrameLayout.MAX_REQUEST_PAYLOAD));
                return c;
            }
            Channel ch = channel;
            ByteBuf buf = ch.alloc().buffer(FrameLayout.LENGTH_FIELD_LENGTH + FrameLayout.REQUEST_HEADER_LENGTH
                    + payloadLength);
            buf.writeIntLE(FrameLayout.REQUEST_HEADER_LENGTH + payloadLength);
            buf.writeByte(type).writeByte(0).writeShort(0);
            buf.writeIntLE(region);
            buf.writeLongLE(offset);
            buf.writeLongLE(arg1);
            buf.writeLongLE(arg2);
            if (payloadLength > 0) {
                buf.writeBytes(payload, payloadOffset, payloadLength);
            }
            synchronized (pending) {
                if (!open) {
                    buf.release();
                    c.fail(lost());
                    return c;
                }
                pending.add(new Pending(c, type == FrameLayout.REQ_FLUSH));
                writer.write(buf);
            }
            return c;
        }

        private volatile Throwable lostCause;

        private AsymNvmException lost() {
            Throwable cause = lostCause; // e.g. the TLS alert of a server that refused this client's certificate
            return new AsymNvmException(ErrorCode.CONNECTION_LOST, "connection to memory node lost"
                    + (cause == null ? "" : ": " + cause.getMessage()), cause);
        }

        @Override
        public Completion read(int regionId, long offset, int length) {
            counters.read(FrameLayout.REQUEST_HEADER_LENGTH);
            return post(FrameLayout.REQ_READ, regionId, offset, length, 0, null, 0, 0);
        }

        @Override
        public Completion write(int regionId, long offset, byte[] data, int dataOffset, int length) {
            counters.write(FrameLayout.REQUEST_HEADER_LENGTH + length);
            return post(FrameLayout.REQ_WRITE, regionId, offset, 0, 0, data, dataOffset, length);
        }

        @Override
        public Completion compareAndSwap(int regionId, long offset, long expected, long update) {
            counters.atomic();
            return post(FrameLayout.REQ_CAS, regionId, offset, expected, update, null, 0, 0);
        }

        @Override
        public Completion flush(long stamp, boolean stamped) {
            counters.flush();
            return post(FrameLayout.REQ_FLUSH, 0, 0, stamp, stamped ? 1 : 0, null, 0, 0);
        }

        @Override
        public Completion call(byte[] request) {
            counters.control(FrameLayout.REQUEST_HEADER_LENGTH + request.length);
            return post(FrameLayout.REQ_CONTROL, 0, 0, 0, 0, request, 0, request.length);
        }

        @Override
        public FabricCounters counters() {
            return counters;
        }

        @Override
        public boolean isOpen() {
            return open;
        }

        @Override
        public void close() {
            Channel ch = channel;
            if (ch != null) {
                ch.close().syncUninterruptibly();
            }
            failAll();
        }

        private void failAll() {
            ArrayDeque<Pending> drained;
            synchronized (pending) {
                open = false;
                drained = new ArrayDeque<>(pending);
                pending.clear();
            }
            for (Pending p : drained) {
                p.completion().fail(lost());
            }
        }

        private final class Handler extends ChannelInboundHandlerAdapter {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ByteBuf f = (ByteBuf) msg;
                try {
                    Pending p;
                    synchronized (pending) {
                        p = pending.poll();
                    }
                    if (p == null || f.readableBytes() < FrameLayout.RESPONSE_HEADER_LENGTH) {
                        if (p != null) {
                            // already dequeued, so failAll() on close would not reach it
                            p.completion().fail(lost());
                        }
                        ctx.close();
                        return;
                    }
                    int base = f.readerIndex();
                    byte type = f.getByte(base + FrameLayout.TYPE_OFFSET);
                    int code = f.getIntLE(base + FrameLayout.ERROR_CODE_OFFSET);
                    long v1 = f.getLongLE(base + FrameLayout.VALUE1_OFFSET);
                    long v2 = f.getLongLE(base + FrameLayout.VALUE2_OFFSET);
                    byte[] payload = new byte[f.readableBytes() - FrameLayout.RESPONSE_HEADER_LENGTH];
                    f.getBytes(base + FrameLayout.RESPONSE_HEADER_LENGTH, payload);
                    if (type == FrameLayout.RESP_ERROR) {
                        p.completion().fail(new AsymNvmException(ErrorCode.fromCode(code),
                                "remote: " + new String(payload, StandardCharsets.UTF_8)));
                    } else {
                        if (p.flush()) {
                            counters.persisted(v1, v2);
                        }
                        p.completion().complete(payload, v1, v2);
                    }
                } finally {
                    f.release();
                }
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                failAll();
            }

            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                if (lostCause == null) {
                    lostCause = cause;
                }
                ctx.close();
            }
        }
    }
}
