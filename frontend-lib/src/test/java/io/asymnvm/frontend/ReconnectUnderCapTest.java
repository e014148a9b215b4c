package io.asymnvm.frontend;

import io.asymnvm.core.fabric.tcp.TcpServerLimits;
import io.asymnvm.testsupport.Conditions;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * With one connection allowed per frontend, a frontend that lost its connection re-attaches although the backend
 * has not yet seen the old connection close: its attaches refused with {@code LIMIT_EXCEEDED} meanwhile are
 * retried within the reconnect timeout, and the commit that found the connection lost completes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReconnectUnderCapTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void shouldRetryAnAttachRefusedForTheCapUntilTheBackendSeesTheOldConnectionClose() throws Exception {
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.TCP, b -> b.serverLimits(
                TcpServerLimits.builder().maxConnectionsPerFrontend(1).build()));
             HoldingProxy proxy = new HoldingProxy(backend.node().port())) {
            FrontendOptions options = FrontendOptions.builder().reconnectTimeoutMillis(30_000).conclude()
                    .withCredentials(backend.node().credentialsFile());
            try (AsymNvm nvm = AsymNvm.connect("127.0.0.1", proxy.port(), 1, options)) {
                Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
                cells.create(4);
                cells.set(0, 1);
                int before = proxy.accepted();

                proxy.cutFrontendSidesHoldBackendSides(); // the frontend sees the loss, the backend does not
                CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> cells.set(1, 2));
                Conditions.awaitTrue("a second re-attach attempt (the first one refused)", Duration.ofSeconds(30),
                        () -> proxy.accepted() >= before + 2 || commit.isDone());
                assertFalse(commit.isCompletedExceptionally(), () -> "the commit failed: " + commit.handle(
                        (v, e) -> String.valueOf(e)).join());
                assertFalse(commit.isDone(), "the backend still counts the old connection: no attach can succeed");

                proxy.releaseBackendSides(); // the backend sees the old connection close
                commit.get(30, TimeUnit.SECONDS);
                assertArrayEquals(new long[] {1, 2, 0, 0}, cells.snapshot());
                assertTrue(nvm.stats().reconnects() >= 1, nvm.stats().toString());
                System.out.println("re-attach attempts until the backend saw the old connection close: "
                        + (proxy.accepted() - before));
            }
            assertEquals(0, proxy.held(), "nothing held at the end");
        }
    }

    /**
     * A loopback TCP proxy that can cut its frontend-side sockets while keeping the backend-side ones open, as a
     * network failure the backend has not noticed yet would.
     */
    static final class HoldingProxy implements AutoCloseable {
        private final ServerSocket server;
        private final int upstreamPort;
        private final AtomicInteger accepted = new AtomicInteger();
        private final List<Pair> pairs = new CopyOnWriteArrayList<>();
        private final List<Socket> heldUpstreams = new CopyOnWriteArrayList<>();
        private final Thread acceptor;

        private record Pair(Socket client, Socket upstream, boolean[] hold) {
        }

        HoldingProxy(int upstreamPort) throws IOException {
            this.upstreamPort = upstreamPort;
            this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            this.acceptor = new Thread(this::acceptLoop, "holding-proxy");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() {
            return server.getLocalPort();
        }

        int accepted() {
            return accepted.get();
        }

        int held() {
            return heldUpstreams.size();
        }

        private void acceptLoop() {
            while (!server.isClosed()) {
                try {
                    Socket client = server.accept();
                    Socket upstream = new Socket();
                    upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), upstreamPort), 5_000);
                    Pair p = new Pair(client, upstream, new boolean[1]);
                    pairs.add(p);
                    accepted.incrementAndGet();
                    pump(p, client, upstream);
                    pump(p, upstream, client);
                } catch (IOException closed) {
                    return;
                }
            }
        }

        private void pump(Pair p, Socket from, Socket to) throws IOException {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            Thread t = new Thread(() -> {
                byte[] buffer = new byte[64 << 10];
                try {
                    for (int n; (n = in.read(buffer)) >= 0; ) {
                        out.write(buffer, 0, n);
                    }
                } catch (IOException ignored) {
                    // one side closed
                } finally {
                    synchronized (p) {
                        closeQuietly(p.client());
                        if (!p.hold()[0]) {
                            closeQuietly(p.upstream());
                        }
                    }
                }
            }, "holding-proxy-pump");
            t.setDaemon(true);
            t.start();
        }

        /** Closes every frontend-side socket; the backend-side ones stay open until released. */
        void cutFrontendSidesHoldBackendSides() {
            for (Pair p : pairs) {
                synchronized (p) {
                    p.hold()[0] = true;
                    heldUpstreams.add(p.upstream());
                    closeQuietly(p.client());
                }
                pairs.remove(p);
            }
        }

        void releaseBackendSides() {
            for (Socket s : heldUpstreams) {
                closeQuietly(s);
                heldUpstreams.remove(s);
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
            releaseBackendSides();
            for (Pair p : pairs) {
                closeQuietly(p.client());
                closeQuietly(p.upstream());
            }
        }

        private static void closeQuietly(Socket s) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }
}
