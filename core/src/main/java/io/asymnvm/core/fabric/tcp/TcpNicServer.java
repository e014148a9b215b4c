package io.asymnvm.core.fabric.tcp;

import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.layout.FrameLayout;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The responder of the TCP fabric: an "emulated NIC" that decodes {@link FrameLayout} frames and executes them
 * through {@link EmulatedNic}, replying in request order on each connection. Several event-loop threads do the
 * I/O and run READ, WRITE and CAS inline; control calls and FLUSH, which may block (replay, catalog, persist),
 * run on a worker pool, one at a time per connection ({@link NicConnectionHandler}) — a FLUSH inline only where
 * it can delay no other connection ({@link EventLoopOccupancy}). A malformed frame or an
 * unknown type gets an error reply with a stable code and the connection keeps serving; a frame longer than the
 * limit gets a typed error and closes that one connection. Limits: {@link TcpServerLimits}. Other connections
 * are never affected.
 */
public final class TcpNicServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TcpNicServer.class);
    private static final long WORKER_STOP_SECONDS = 10;

    private final InetSocketAddress bindAddress;
    private final TcpServerLimits limits;
    private final ThreadPoolExecutor workers;
    private final NicPipeline pipeline;
    private final TcpTls tls;
    private final TcpTransport transport;
    private EventLoopGroup boss;
    private EventLoopGroup eventLoops;
    private Channel serverChannel;

    /** A server with default limits, the frame limit being the protocol's largest frame. */
    public TcpNicServer(EmulatedNic nic, InetSocketAddress bindAddress) {
        this(nic, bindAddress, TcpServerLimits.DEFAULTS.resolve(FrameLayout.MAX_FRAME_LENGTH,
                TcpServerLimits.UNATTACHED_CONNECTION_ALLOWANCE), null);
    }

    /** {@code limits} must be {@linkplain TcpServerLimits#resolve resolved}; plain tcp. */
    public TcpNicServer(EmulatedNic nic, InetSocketAddress bindAddress, TcpServerLimits limits) {
        this(nic, bindAddress, limits, null);
    }

    /**
     * {@code limits} must be {@linkplain TcpServerLimits#resolve resolved}. With {@code tls} (null: plain tcp),
     * every connection runs through TLS first ({@link TcpTls}).
     */
    public TcpNicServer(EmulatedNic nic, InetSocketAddress bindAddress, TcpServerLimits limits, TcpTls tls) {
        this(nic, bindAddress, limits, tls, TcpTransport.fromProperties());
    }

    /** As above, on {@code transport} (the system properties' choice: {@link TcpTransport#fromProperties()}). */
    public TcpNicServer(EmulatedNic nic, InetSocketAddress bindAddress, TcpServerLimits limits, TcpTls tls,
                        TcpTransport transport) {
        if (tls != null && tls.isClient()) {
            throw new IllegalArgumentException("client TLS settings given to a server");
        }
        this.bindAddress = bindAddress;
        this.tls = tls;
        this.limits = limits.validate();
        this.workers = new ThreadPoolExecutor(limits.workerThreads(), limits.workerThreads(), 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), new DefaultThreadFactory("asymnvm-nic-worker", true));
        workers.allowCoreThreadTimeOut(true);
        this.pipeline = new NicPipeline(nic, limits, workers);
        this.transport = java.util.Objects.requireNonNull(transport, "transport");
    }

    /** The transport that runs, and the loops' spin window. */
    public TcpTransport transport() {
        return transport;
    }

    /** Binds and starts serving; fails with a message naming the address if the port is taken. */
    public synchronized TcpNicServer start() {
        boss = new MultiThreadIoEventLoopGroup(1, transport.ioHandlerFactory(0));
        eventLoops = new MultiThreadIoEventLoopGroup(limits.eventLoopThreads(), (java.util.concurrent.Executor) null,
                pipeline.occupancy(), transport.ioHandlerFactory(transport.serverSpinNanos()));
        try {
            serverChannel = new ServerBootstrap()
                    .group(boss, eventLoops)
                    .channel(transport.serverChannel())
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(childInitializer())
                    .bind(bindAddress).sync().channel();
        } catch (Exception e) {
            close();
            throw new IllegalArgumentException("cannot listen on " + bindAddress + ": " + e.getMessage(), e);
        }
        LOG.info("emulated NIC listening on {} ({}; {})", serverChannel.localAddress(), limits, transport);
        return this;
    }

    /**
     * The pipeline of one accepted connection (TLS if configured, then {@link NicPipeline}); package-private so that
     * tests can drive it with arbitrary bytes over an {@code EmbeddedChannel}.
     */
    ChannelInitializer<Channel> childInitializer() {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                TcpTls.installServer(tls, ch);
                pipeline.init(ch);
            }
        };
    }

    public int port() {
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    public TcpServerLimits limits() {
        return limits;
    }

    /** Connections open now (tests and diagnostics). */
    public int openConnections() {
        return pipeline.registry().openConnections();
    }

    /**
     * Stops accepting, closes every connection, then waits (bounded) for operations still running on workers,
     * so the caller may unmap the memory they touch once this returns.
     */
    @Override
    public synchronized void close() {
        if (serverChannel != null) {
            serverChannel.close().syncUninterruptibly();
            serverChannel = null;
        }
        if (boss != null) {
            boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            eventLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            boss = null;
            eventLoops = null;
        }
        pipeline.close();
        workers.shutdown();
        try {
            if (!workers.awaitTermination(WORKER_STOP_SECONDS, TimeUnit.SECONDS)) {
                LOG.warn("emulated NIC workers still busy after {} s; interrupting them", WORKER_STOP_SECONDS);
                workers.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
