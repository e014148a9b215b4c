package io.asymnvm.examples.commit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The busy-polled loopback round trip: the floor a SPIN-waiting commit over tcp is compared with. A
 * {@value #MESSAGE_LENGTH}-byte ping over a loopback TCP socket (no delay), echoed by a thread of this JVM; both
 * sides poll their non-blocking socket with {@link Thread#onSpinWait()} instead of sleeping in the kernel, so no
 * thread is woken on either side. No persistence, no framing, no Netty: the network floor alone.
 *
 * <p>The echo thread spins only between {@link #begin()} and {@link #end()} (parked otherwise), so that the
 * commit blocks interleaved with the probe's do not compete with a spinning thread on a small machine. One
 * caller thread; {@link #close()} stops the echo thread.
 */
public final class BusyLoopbackProbe implements AutoCloseable {
    /** Bytes per ping and per echo. */
    public static final int MESSAGE_LENGTH = 64;
    private static final long LIMIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final ServerSocketChannel server;
    private final SocketChannel client;
    private final SocketChannel echoSide;
    private final Thread echo;
    private final ByteBuffer ping = ByteBuffer.allocateDirect(MESSAGE_LENGTH);
    private final ByteBuffer pong = ByteBuffer.allocateDirect(MESSAGE_LENGTH);
    private volatile boolean active;
    private volatile boolean closed;

    private BusyLoopbackProbe() throws IOException {
        server = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        client = SocketChannel.open(server.getLocalAddress());
        echoSide = server.accept();
        for (SocketChannel c : new SocketChannel[] {client, echoSide}) {
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            c.configureBlocking(false);
        }
        echo = new Thread(this::echoLoop, "busy-loopback-echo");
        echo.setDaemon(true);
        echo.start();
    }

    /** Opens the loopback pair and starts the (parked) echo thread. */
    public static BusyLoopbackProbe open() {
        try {
            return new BusyLoopbackProbe();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a loopback socket pair", e);
        }
    }

    /** The echo thread starts spinning; the first round trip after this includes its wake-up. */
    public void begin() {
        active = true;
        LockSupport.unpark(echo);
    }

    /** The echo thread parks after its current echo. */
    public void end() {
        active = false;
    }

    /** One busy-polled round trip: send {@value #MESSAGE_LENGTH} bytes, spin until they come back. */
    public void roundTrip() {
        try {
            long deadline = System.nanoTime() + LIMIT_NANOS;
            ping.clear();
            while (ping.hasRemaining()) {
                client.write(ping);
                check(deadline);
            }
            pong.clear();
            while (pong.hasRemaining()) {
                if (client.read(pong) < 0) {
                    throw new IllegalStateException("echo side closed the loopback socket");
                }
                if (pong.hasRemaining()) {
                    Thread.onSpinWait();
                    check(deadline);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("loopback round trip failed", e);
        }
    }

    private static void check(long deadline) {
        if (System.nanoTime() - deadline > 0) {
            throw new IllegalStateException("loopback echo did not answer within "
                    + TimeUnit.NANOSECONDS.toSeconds(LIMIT_NANOS) + " s");
        }
    }

    private void echoLoop() {
        ByteBuffer buf = ByteBuffer.allocateDirect(4 * MESSAGE_LENGTH);
        try {
            while (!closed) {
                if (!active) {
                    LockSupport.park(this);
                    continue;
                }
                int n = echoSide.read(buf);
                if (n < 0) {
                    return;
                }
                if (buf.position() == 0) {
                    Thread.onSpinWait();
                    continue;
                }
                buf.flip();
                while (buf.hasRemaining()) {
                    echoSide.write(buf);
                }
                buf.clear();
            }
        } catch (IOException e) {
            if (!closed) {
                throw new UncheckedIOException("loopback echo failed", e);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(echo);
        try {
            client.close();
            echoSide.close();
            server.close();
            echo.join(TimeUnit.SECONDS.toMillis(5));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot close the loopback socket pair", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
