package io.asymnvm.core.fabric.tcp;

import io.asymnvm.core.fabric.EmulatedNic;
import io.netty.channel.Channel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.timeout.IdleStateHandler;

import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Builds the channel pipeline of one emulated-NIC connection: idle timeout, request framing with the frame
 * limit, then the {@link NicConnectionHandler}; and sets the reply write-buffer water marks. Shared by the
 * server and by tests that feed bytes through Netty's {@code EmbeddedChannel}: pass a same-thread executor
 * ({@code Runnable::run}) as {@code workers} so FLUSH and control calls run synchronously, call {@link #init} on
 * the channel and fire {@code channelActive} (an {@code EmbeddedChannel} is active before the handlers are
 * added), write inbound bytes, run the channel's pending tasks, then read the replies outbound
 * ({@code TcpNicServerTest#pipelineRunsInAnEmbeddedChannel}).
 */
final class NicPipeline {
    private final EmulatedNic nic;
    private final TcpServerLimits limits;
    private final ConnectionRegistry registry;
    private final Executor workers;
    private final EventLoopOccupancy occupancy = new EventLoopOccupancy();
    private final FlushPlacement flushPlacement = FlushPlacement.fromProperty();
    private final java.util.Map<io.netty.util.concurrent.EventExecutor, PersistLane> lanes =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** {@code limits} must be {@linkplain TcpServerLimits#isResolved() resolved}. */
    NicPipeline(EmulatedNic nic, TcpServerLimits limits, Executor workers) {
        if (!limits.isResolved()) {
            throw new IllegalArgumentException("server limits not resolved: " + limits);
        }
        this.nic = nic;
        this.limits = limits;
        this.registry = new ConnectionRegistry(limits.maxConnections(), limits.maxConnectionsPerFrontend());
        this.workers = workers;
    }

    ConnectionRegistry registry() {
        return registry;
    }

    /** The chooser the server's event-loop group must use, so FLUSH may run inline on a loop of its own. */
    EventLoopOccupancy occupancy() {
        return occupancy;
    }

    /** The persist lane of {@code loop} ({@link FlushPlacement#LANE}), started on first use. */
    private java.util.concurrent.Executor lane(io.netty.util.concurrent.EventExecutor loop) {
        return lanes.computeIfAbsent(loop, l -> new PersistLane("nic-persist-" + lanes.size()));
    }

    /** Stops the persist lanes (after the event loops). */
    void close() {
        lanes.values().forEach(PersistLane::close);
        lanes.clear();
    }

    /** Adds this server's handlers to {@code ch}'s pipeline (after anything already there, e.g. TLS). */
    void init(Channel ch) {
        ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(limits.writeBufferLowWaterMark(),
                limits.writeBufferHighWaterMark()));
        if (limits.idleTimeoutMillis() > 0) {
            ch.pipeline().addLast(new IdleStateHandler(false, 0, 0, limits.idleTimeoutMillis(),
                    TimeUnit.MILLISECONDS));
        }
        ch.pipeline().addLast(new RequestFrameDecoder(limits.maxFrameLength()));
        ch.pipeline().addLast(new NicConnectionHandler(nic, registry, workers, occupancy,
                limits.writeBufferHighWaterMark(), flushPlacement, this::lane));
    }
}
