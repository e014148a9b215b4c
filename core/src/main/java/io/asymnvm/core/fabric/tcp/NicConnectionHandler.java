package io.asymnvm.core.fabric.tcp;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.fabric.NicSession;
import io.asymnvm.core.layout.FrameLayout;
import io.asymnvm.core.logging.RateLimitedLog;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One connection of the emulated NIC: executes its frames one at a time, in arrival order, and replies in that
 * order (the protocol has no request ids).
 *
 * <p>Design. Every field is touched only on the channel's event-loop thread, so ordering needs no lock. A frame
 * that may block (control calls wait for replay or open the catalog; FLUSH persists) is handed to the shared
 * worker pool; until its reply is back on the event loop the connection is {@code busy} and later frames wait in
 * its backlog. READ, WRITE and CAS are memory copies: when nothing of the connection is queued or running they
 * execute inline on the event loop. A FLUSH also runs inline while its connection is the only one on its event
 * loop, where it can delay nothing but that connection's own later requests ({@link EventLoopOccupancy} says
 * why and keeps connections apart). The worker posts the reply back to the event loop, which writes it and then
 * drains the backlog, so a reply written inline can never overtake one computed on a worker.
 *
 * <p>Backpressure. Frames execute only while the channel is writable (pending replies under the high water
 * mark); reading from the socket stops while the channel is unwritable or the backlog holds more than the high
 * water mark in bytes, and resumes when both fall back. A peer that sends requests but never reads its replies
 * therefore holds at most about one high water mark of replies and one of requests, plus the frame being decoded.
 *
 * <p>Limits. A connection over the server's total cap answers its first request with {@code LIMIT_EXCEEDED} and
 * closes; an oversized length field gets its typed error after the replies of every earlier frame, then the
 * connection closes; an idle connection (no traffic for the idle timeout, nothing running) is closed.
 */
final class NicConnectionHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(NicConnectionHandler.class);
    /** Refused connections and oversized frames: a peer can cause these at will, so at most a line a second. */
    private static final RateLimitedLog REFUSED_CONNECTIONS = RateLimitedLog.warn(LOG);
    private static final RateLimitedLog FRAMES_TOO_LONG = RateLimitedLog.warn(LOG);
    /** Bound on queued frames independent of their size (tiny frames cost bookkeeping too). */
    static final int MAX_BACKLOG_FRAMES = 4096;

    private final EmulatedNic nic;
    private final NicRequestAdapter adapter;
    private final ConnectionRegistry registry;
    private final Executor workers;
    private final EventLoopOccupancy occupancy;
    private final int backlogByteLimit;
    private final NicSession session = new NicSession();
    private final AtomicBoolean sessionClosed = new AtomicBoolean();
    /** Frames (ByteBuf) waiting their turn, or an AsymNvmException to reply with before closing. */
    private final ArrayDeque<Object> backlog = new ArrayDeque<>();
    private ConnectionRegistry.Slot slot;
    private AsymNvmException refusal;
    private long backlogBytes;
    private boolean busy;
    private boolean stopAccepting;
    private boolean inactive;

    private final FlushPlacement flushPlacement;
    private final java.util.function.Function<io.netty.util.concurrent.EventExecutor, Executor> lanes;

    NicConnectionHandler(EmulatedNic nic, ConnectionRegistry registry, Executor workers,
                         EventLoopOccupancy occupancy, int backlogByteLimit) {
        this(nic, registry, workers, occupancy, backlogByteLimit, FlushPlacement.INLINE_WHEN_ALONE, null);
    }

    NicConnectionHandler(EmulatedNic nic, ConnectionRegistry registry, Executor workers,
                         EventLoopOccupancy occupancy, int backlogByteLimit, FlushPlacement flushPlacement,
                         java.util.function.Function<io.netty.util.concurrent.EventExecutor, Executor> lanes) {
        this.flushPlacement = flushPlacement;
        this.lanes = lanes;
        this.nic = nic;
        this.adapter = new NicRequestAdapter(nic);
        this.registry = registry;
        this.workers = workers;
        this.occupancy = occupancy;
        this.backlogByteLimit = backlogByteLimit;
    }

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
        occupancy.registered(ctx.executor());
        super.channelRegistered(ctx);
    }

    @Override
    public void channelUnregistered(ChannelHandlerContext ctx) throws Exception {
        occupancy.unregistered(ctx.executor());
        super.channelUnregistered(ctx);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        refusal = registry.open();
        session.onDisconnect(() -> ctx.channel().close());
        if (refusal == null) {
            slot = registry.new Slot();
        } else {
            REFUSED_CONNECTIONS.log("refusing {}: {}", ctx.channel().remoteAddress(), refusal.detail());
        }
        super.channelActive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        if (stopAccepting || inactive) {
            frame.release();
            return;
        }
        backlog.add(frame);
        backlogBytes += frame.readableBytes();
        drain(ctx, false);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        drain(ctx, true);
        super.channelWritabilityChanged(ctx);
    }

    /** Executes queued frames while the connection is neither busy nor unwritable; then adjusts reading. */
    private void drain(ChannelHandlerContext ctx, boolean flush) {
        Channel ch = ctx.channel();
        boolean wrote = false;
        while (!busy && !inactive && ch.isWritable() && !backlog.isEmpty()) {
            Object next = backlog.poll();
            if (next instanceof AsymNvmException e) {
                replyAndClose(ctx, e);
                return;
            }
            ByteBuf frame = (ByteBuf) next;
            backlogBytes -= frame.readableBytes();
            if (refusal != null) {
                frame.release();
                replyAndClose(ctx, refusal);
                return;
            }
            byte type = NicRequestAdapter.type(frame);
            boolean inlineFlush = type == FrameLayout.REQ_FLUSH
                    && flushPlacement == FlushPlacement.INLINE_WHEN_ALONE && occupancy.alone(ctx.executor());
            if (type == FrameLayout.REQ_FLUSH && flushPlacement == FlushPlacement.LANE && lanes != null) {
                busy = true;
                submit(ctx, frame, lanes.apply(ctx.executor()));
            } else if (type == FrameLayout.REQ_CONTROL || type == FrameLayout.REQ_FLUSH && !inlineFlush) {
                busy = true;
                submit(ctx, frame, workers);
            } else {
                if (inlineFlush) {
                    occupancy.persisting(ctx.executor(), true);
                }
                try {
                    ctx.write(adapter.execute(session, slot, frame, ctx.alloc()));
                    wrote = true;
                } finally {
                    frame.release();
                    if (inlineFlush) {
                        occupancy.persisting(ctx.executor(), false);
                    }
                }
            }
        }
        if (wrote && flush) {
            ctx.flush();
        }
        updateAutoRead(ch);
    }

    private void submit(ChannelHandlerContext ctx, ByteBuf frame, Executor executor) {
        try {
            executor.execute(() -> {
                ByteBuf reply;
                try {
                    reply = adapter.execute(session, slot, frame, ctx.alloc());
                } catch (Throwable t) { // an Error too: the connection must get its reply and stop being busy
                    LOG.error("request on session {} failed with {}", session.id(), t.toString(), t);
                    reply = NicRequestAdapter.error(ctx.alloc(), new AsymNvmException(ErrorCode.UNKNOWN,
                            "request failed on the backend: " + t));
                } finally {
                    frame.release();
                }
                ByteBuf done = reply;
                try {
                    ctx.executor().execute(() -> completed(ctx, done));
                } catch (RejectedExecutionException stopped) {
                    done.release(); // the event loop is gone: the connection is closing with the server
                    closeSession();
                }
            });
        } catch (RejectedExecutionException stopped) {
            frame.release();
            busy = false;
            ctx.close();
        }
    }

    private void completed(ChannelHandlerContext ctx, ByteBuf reply) {
        busy = false;
        if (inactive) {
            reply.release();
            closeSession();
            return;
        }
        ctx.write(reply);
        ctx.flush();
        drain(ctx, true);
    }

    private void replyAndClose(ChannelHandlerContext ctx, AsymNvmException e) {
        stopAccepting = true;
        releaseBacklog();
        ctx.writeAndFlush(NicRequestAdapter.error(ctx.alloc(), e)).addListener(f -> ctx.close());
    }

    private void updateAutoRead(Channel ch) {
        boolean read = !stopAccepting && ch.isWritable() && backlogBytes <= backlogByteLimit
                && backlog.size() < MAX_BACKLOG_FRAMES;
        if (ch.config().isAutoRead() != read) {
            ch.config().setAutoRead(read);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            if (!busy) { // a long control call (attach waiting for replay) is not idleness
                LOG.info("closing idle connection {} ({})", ctx.channel().remoteAddress(), describe());
                ctx.close();
            }
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        inactive = true;
        releaseBacklog();
        if (slot != null) {
            slot.release();
        }
        if (!busy) {
            closeSession();
        } // else: the worker's completion closes it, after the running operation
        super.channelInactive(ctx);
    }

    private void closeSession() {
        if (sessionClosed.compareAndSet(false, true)) {
            nic.closed(session);
        }
    }

    private void releaseBacklog() {
        for (Object o : backlog) {
            if (o instanceof ByteBuf b) {
                b.release();
            }
        }
        backlog.clear();
        backlogBytes = 0;
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof RequestFrameDecoder.FrameTooLongException tooLong) {
            if (!stopAccepting) {
                FRAMES_TOO_LONG.log("closing {}: {}", ctx.channel().remoteAddress(), tooLong.reply().detail());
                backlog.add(tooLong.reply()); // after the replies of every frame before it
                stopAccepting = true;
                drain(ctx, true);
            }
            return;
        }
        LOG.debug("connection {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }

    private String describe() {
        int f = session.frontendId();
        return f < 0 ? "unattached session " + session.id() : "frontend " + f + ", session " + session.id();
    }
}
