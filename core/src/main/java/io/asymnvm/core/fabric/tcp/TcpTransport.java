package io.asymnvm.core.fabric.tcp;

import io.netty.channel.ChannelFactory;
import io.netty.channel.DefaultSelectStrategyFactory;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.SelectStrategyFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.TimeUnit;

/**
 * Which Netty transport the tcp fabric runs on, and how long its event loops keep polling after their last event.
 *
 * <ul>
 *   <li>Transport: Netty's native epoll ({@code EpollIoHandler}, edge-triggered, fewer copies and system calls than
 *       NIO's selector) when {@link Epoll#isAvailable()}, else NIO. System property {@value #TRANSPORT_PROPERTY}:
 *       {@code auto} (default), {@code epoll} (an error naming the cause if it cannot load), {@code nio}.</li>
 *   <li>Loop spin ({@link LoopSpinStrategy}): the backend's loops poll {@value #SERVER_SPIN_PROPERTY} µs after their
 *       last event, so that a commit's next frame, arriving within that window, finds the loop running instead of
 *       asleep in {@code epoll_wait}; a client whose callers {@linkplain io.asymnvm.core.fabric.WaitPolicy.Kind#SPIN
 *       spin} polls {@value #CLIENT_SPIN_PROPERTY} µs. Each within [0, {@value #MAX_SPIN_MICROS}] µs; both default
 *       to 0 (loops block at once, as before): on the 2-core build machine, oversubscribed by a load of 25 to 35,
 *       spinning loops took the CPU from the threads that produce the replies and no configuration measured
 *       consistently faster (README, "Transport and polling loops"). Turn them on where the loops have cores.</li>
 * </ul>
 * Every value is checked when read ({@link #fromProperties()}), before anything is bound or connected; a bad one is an
 * {@link IllegalArgumentException} naming the property, the value and the limit.
 */
public final class TcpTransport {
    public static final String TRANSPORT_PROPERTY = "asymnvm.tcp.transport";
    public static final String SERVER_SPIN_PROPERTY = "asymnvm.tcp.serverLoopSpinMicros";
    public static final String CLIENT_SPIN_PROPERTY = "asymnvm.tcp.clientLoopSpinMicros";
    public static final long DEFAULT_SERVER_SPIN_MICROS = 0;
    public static final long DEFAULT_CLIENT_SPIN_MICROS = 0;
    public static final long MAX_SPIN_MICROS = 10_000;

    /** The transports. */
    public enum Kind {
        AUTO, EPOLL, NIO;

        /** Parses a name, case-insensitive; an unknown one is an {@link IllegalArgumentException} naming it. */
        public static Kind parse(String name) {
            for (Kind k : values()) {
                if (k.name().equalsIgnoreCase(name == null ? "" : name.trim())) {
                    return k;
                }
            }
            throw new IllegalArgumentException("unknown tcp transport '" + name + "' (" + TRANSPORT_PROPERTY
                    + "): expected one of auto, epoll, nio");
        }
    }

    private final boolean epoll;
    private final long serverSpinNanos;
    private final long clientSpinNanos;

    private TcpTransport(boolean epoll, long serverSpinMicros, long clientSpinMicros) {
        this.epoll = epoll;
        this.serverSpinNanos = TimeUnit.MICROSECONDS.toNanos(serverSpinMicros);
        this.clientSpinNanos = TimeUnit.MICROSECONDS.toNanos(clientSpinMicros);
    }

    /** From the system properties, validated. */
    public static TcpTransport fromProperties() {
        return parse(System.getProperty(TRANSPORT_PROPERTY), System.getProperty(SERVER_SPIN_PROPERTY),
                System.getProperty(CLIENT_SPIN_PROPERTY));
    }

    /** From the three properties' raw values (null or blank: the default), validated. */
    static TcpTransport parse(String transport, String serverSpinMicros, String clientSpinMicros) {
        return of(Kind.parse(transport == null || transport.isBlank() ? "auto" : transport),
                spinMicros(SERVER_SPIN_PROPERTY, serverSpinMicros, DEFAULT_SERVER_SPIN_MICROS),
                spinMicros(CLIENT_SPIN_PROPERTY, clientSpinMicros, DEFAULT_CLIENT_SPIN_MICROS));
    }

    /**
     * {@code kind} resolved ({@code AUTO}: epoll if available), with the two spin windows in µs; {@code EPOLL} where
     * it cannot load, or a window outside [0, {@value #MAX_SPIN_MICROS}], is an {@link IllegalArgumentException}.
     */
    public static TcpTransport of(Kind kind, long serverSpinMicros, long clientSpinMicros) {
        checkSpin(SERVER_SPIN_PROPERTY, serverSpinMicros);
        checkSpin(CLIENT_SPIN_PROPERTY, clientSpinMicros);
        boolean available = Epoll.isAvailable();
        if (kind == Kind.EPOLL && !available) {
            Throwable cause = Epoll.unavailabilityCause();
            throw new IllegalArgumentException("tcp transport 'epoll' requested (" + TRANSPORT_PROPERTY
                    + ") but native epoll is unavailable: " + (cause == null ? "unknown cause" : cause));
        }
        return new TcpTransport(kind == Kind.EPOLL || (kind == Kind.AUTO && available), serverSpinMicros,
                clientSpinMicros);
    }

    private static long spinMicros(String property, String raw, long defaultMicros) {
        if (raw == null || raw.isBlank()) {
            return defaultMicros;
        }
        long v;
        try {
            v = Long.parseLong(raw.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(property + " '" + raw + "' is not a whole number of microseconds "
                    + "in [0, " + MAX_SPIN_MICROS + "]");
        }
        return v;
    }

    private static void checkSpin(String property, long micros) {
        if (micros < 0 || micros > MAX_SPIN_MICROS) {
            throw new IllegalArgumentException(property + " " + micros + " µs is outside [0, " + MAX_SPIN_MICROS
                    + "] µs");
        }
    }

    /** {@code epoll} or {@code nio}: what runs (bench JSON {@code transport}). */
    public String name() {
        return epoll ? "epoll" : "nio";
    }

    public boolean isEpoll() {
        return epoll;
    }

    /** The backend's loop spin window, in ns. */
    public long serverSpinNanos() {
        return serverSpinNanos;
    }

    /** The loop spin window of a client whose callers spin, in ns. */
    public long clientSpinNanos() {
        return clientSpinNanos;
    }

    /** An I/O handler factory whose loops poll {@code spinNanos} after their last event (0: block at once). */
    IoHandlerFactory ioHandlerFactory(long spinNanos) {
        SelectStrategyFactory strategy = spinNanos > 0 ? LoopSpinStrategy.factory(spinNanos)
                : DefaultSelectStrategyFactory.INSTANCE;
        return epoll ? EpollIoHandler.newFactory(0, strategy)
                : NioIoHandler.newFactory(SelectorProvider.provider(), strategy);
    }

    /** Client channels: plain ones let the posting thread write ({@link DirectWriter}). */
    ChannelFactory<SocketChannel> clientChannel(boolean directWrites) {
        if (epoll) {
            return EpollSocketChannel::new;
        }
        return directWrites ? DirectWriter.DirectNioSocketChannel::new : NioSocketChannel::new;
    }

    Class<? extends ServerChannel> serverChannel() {
        return epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    @Override
    public String toString() {
        return name() + " (loop spin: server " + TimeUnit.NANOSECONDS.toMicros(serverSpinNanos) + " µs, spinning client "
                + TimeUnit.NANOSECONDS.toMicros(clientSpinNanos) + " µs)";
    }
}
