package io.asymnvm.system;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.FrameLayout;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.frontend.AsymNvm;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import static io.asymnvm.core.testing.RequestFrames.control;
import static io.asymnvm.core.testing.RequestFrames.frame;
import static io.asymnvm.core.testing.RequestFrames.lengthPrefixed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Hostile clients against a real backend over TCP while a legitimate frontend commits bank transfers: concurrent
 * raw-socket connections send random garbage, frames truncated before the connection closes, length fields beyond
 * the frame limit, and well-formed frames (READ, WRITE, CAS, FLUSH, CONTROL) from sessions that never attached:
 * one-sided operations on regions never granted, control calls other than attach, attach with a frontend id the
 * backend does not have, unknown frame types and kinds. No frame is a valid attach of any frontend id the backend
 * serves (that would legitimately fence the frontend: what authentication is for).
 *
 * <p>Checks: the backend keeps serving (the frontend commits throughout, a fresh connection's PING answers),
 * every error reply carries a known code other than {@code UNKNOWN} (the table by code is printed), a non-error
 * reply answers only a FLUSH (an unattached session has nothing to persist), and after the storm every transfer
 * whose commit returned is in the image, also after a backend restart.
 */
class HostileClientTest {
    private static final int ACCOUNTS = 16;
    private static final long INITIAL = 1_000_000;
    private static final int HOSTILE_CONNECTIONS = 4;
    private static final int BATCH = 500;

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void shouldServeTheFrontendThroughAStormOfHostileFrames() throws Exception {
        run(100_000, 77L);
    }

    @Test
    @Tag("slow")
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    void shouldServeTheFrontendThroughAMillionHostileFrames() throws Exception {
        run(1_000_000, 20261124L);
    }

    private void run(long frames, long seed) throws Exception {
        Path pm = dir.resolve("hostile.pm");
        BackendConfiguration config = BackendConfiguration.builder(pm).size(64L << 20).semRingCapacity(1L << 20)
                .redoRingCapacity(4L << 20).port(0).conclude();
        long[] oracle = new long[ACCOUNTS];
        java.util.Arrays.fill(oracle, INITIAL);
        AtomicLong acknowledged = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Tally tally = new Tally();
        long started;
        long elapsed;
        long during;
        BackendNode node = BackendNode.start(config);
        try {
            int port = node.port();
            try (AsymNvm nvm = AsymNvm.connect("127.0.0.1", port, 0,
                    io.asymnvm.frontend.FrontendOptions.defaults().withCredentials(node.credentialsFile()))) {
                Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
                accounts.create(ACCOUNTS, INITIAL);
                Thread committer = new Thread(() -> {
                    Random r = new Random(seed);
                    try {
                        while (!stop.get()) {
                            int from = r.nextInt(ACCOUNTS);
                            int to = r.nextInt(ACCOUNTS);
                            long amount = 1 + r.nextInt(1000);
                            accounts.transfer(from, to, amount);
                            oracle[from] -= amount; // this thread alone writes the oracle until it is joined
                            oracle[to] += amount;
                            acknowledged.incrementAndGet();
                        }
                    } catch (Throwable t) {
                        failure.set(t);
                    }
                }, "legitimate-frontend");
                committer.start();
                started = System.nanoTime();
                long before = acknowledged.get();
                List<Thread> hostile = new ArrayList<>();
                for (int i = 0; i < HOSTILE_CONNECTIONS; i++) {
                    long budget = frames / HOSTILE_CONNECTIONS;
                    long s = seed * 1_000 + i;
                    Thread t = new Thread(() -> {
                        try {
                            new Hostile(port, new Random(s), tally).run(budget);
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    }, "hostile-" + i);
                    hostile.add(t);
                    t.start();
                }
                for (Thread t : hostile) {
                    t.join(TimeUnit.SECONDS.toMillis(600));
                    assertTrue(!t.isAlive(), t.getName() + " did not finish");
                }
                elapsed = System.nanoTime() - started;
                during = acknowledged.get() - before;
                stop.set(true);
                committer.join(60_000);
                assertNull(failure.get(), () -> "failed: " + failure.get());
                try (TcpFabric fabric = new TcpFabric("127.0.0.1", port); FabricConnection c = fabric.connect()) {
                    assertEquals(0, c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_PING, 0, 0))
                            .await().bytes().length, "the backend stopped serving");
                }
                for (int i = 0; i < ACCOUNTS; i++) {
                    assertEquals(oracle[i], accounts.balance(i), "balance of account " + i + " (seed " + seed + ")");
                }
            }
        } finally {
            node.close();
        }
        tally.print(frames, elapsed, during);
        assertTrue(tally.sent.sum() >= frames, "frames sent " + tally.sent.sum() + " < " + frames);
        assertTrue(during > 0, "the legitimate frontend committed nothing during the storm");
        assertEquals(0, tally.byCode.get(ErrorCode.UNKNOWN).sum(), "untyped refusals");
        assertEquals(0, tally.unexpectedSuccess.sum(), "hostile frames served as if authorised");
        assertTrue(tally.oversizedConnections.sum() > 0, "no oversized frame was sent");
        assertEquals(tally.oversizedConnections.sum(), tally.oversizedRefused.sum(),
                "every oversized length field is refused with exactly one error reply");

        try (BackendNode again = BackendNode.start(config);
             AsymNvm nvm = AsymNvm.connect("127.0.0.1", again.port(), 0,
                     io.asymnvm.frontend.FrontendOptions.defaults().withCredentials(again.credentialsFile()))) {
            Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
            long total = 0;
            for (int i = 0; i < ACCOUNTS; i++) {
                long balance = accounts.balance(i);
                total += balance;
                assertEquals(oracle[i], balance, "balance of account " + i + " after restart (seed " + seed + ")");
            }
            assertEquals(ACCOUNTS * INITIAL, total, "a partial transfer is visible");
        }
    }

    /** Replies by error code, and frames by kind. */
    static final class Tally {
        final Map<ErrorCode, LongAdder> byCode = new EnumMap<>(ErrorCode.class);
        final LongAdder sent = new LongAdder();
        final LongAdder acks = new LongAdder();
        final LongAdder unexpectedSuccess = new LongAdder();
        final LongAdder closedByServer = new LongAdder();
        final LongAdder garbageConnections = new LongAdder();
        final LongAdder truncatedConnections = new LongAdder();
        final LongAdder oversizedConnections = new LongAdder();
        final LongAdder oversizedRefused = new LongAdder();

        Tally() {
            for (ErrorCode c : ErrorCode.values()) {
                byCode.put(c, new LongAdder());
            }
        }

        void error(int code) {
            ErrorCode c = ErrorCode.fromCode(code);
            byCode.get(c.code() == code ? c : ErrorCode.UNKNOWN).increment();
        }

        void print(long target, long nanos, long committed) {
            long replies = acks.sum();
            StringBuilder sb = new StringBuilder(String.format("hostile clients: %,d frames sent (target %,d) by %d "
                    + "concurrent clients in %.1f s; legitimate frontend committed %,d transfers meanwhile%n",
                    sent.sum(), target, HOSTILE_CONNECTIONS, nanos / 1e9, committed));
            sb.append(String.format("  connections: %,d garbage, %,d truncated, %,d oversized; %,d closed by the "
                    + "server; %,d oversized refused with one error reply%n", garbageConnections.sum(),
                    truncatedConnections.sum(), oversizedConnections.sum(), closedByServer.sum(),
                    oversizedRefused.sum()));
            sb.append(String.format("  %-22s %,12d%n", "ACK (FLUSH)", replies));
            for (Map.Entry<ErrorCode, LongAdder> e : byCode.entrySet()) {
                if (e.getValue().sum() > 0) {
                    sb.append(String.format("  %-22s %,12d%n", e.getKey() + "(" + e.getKey().code() + ")",
                            e.getValue().sum()));
                }
            }
            System.out.print(sb);
        }
    }

    /** One hostile client: rounds of pipelined frames on one connection, and short-lived nasty connections. */
    static final class Hostile {
        private static final int[] REGIONS = {RegionIds.HEAP, RegionIds.control(0), RegionIds.semantic(0),
                RegionIds.redo(0), RegionIds.redo(7), 12345, -1};
        private final int port;
        private final Random random;
        private final Tally tally;
        private long myErrors;

        Hostile(int port, Random random, Tally tally) {
            this.port = port;
            this.random = random;
            this.tally = tally;
        }

        void run(long budget) throws IOException {
            long sent = 0;
            for (int round = 0; sent < budget; round++) {
                sent += pipelined((int) Math.min(BATCH * 2L, budget - sent));
                switch (round % 3) {
                    case 0 -> sent += garbage();
                    case 1 -> sent += truncated();
                    default -> sent += oversized();
                }
            }
        }

        private Socket open() throws IOException {
            Socket s = new Socket();
            s.setTcpNoDelay(true);
            s.setSoTimeout(30_000);
            s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            return s;
        }

        /** Well-formed but unauthorised frames, pipelined in batches; every reply is read and classified. */
        private int pipelined(int count) throws IOException {
            try (Socket s = open()) {
                OutputStream out = new BufferedOutputStream(s.getOutputStream(), 1 << 16);
                DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 1 << 16));
                int done = 0;
                while (done < count) {
                    int n = Math.min(BATCH, count - done);
                    byte[] types = new byte[n];
                    for (int i = 0; i < n; i++) {
                        byte[] f = unauthorised();
                        int typeAt = FrameLayout.LENGTH_FIELD_LENGTH + FrameLayout.TYPE_OFFSET;
                        types[i] = f.length > typeAt ? f[typeAt] : -1;
                        out.write(f);
                    }
                    out.flush();
                    tally.sent.add(n);
                    for (int i = 0; i < n; i++) {
                        if (!reply(in, types[i])) {
                            tally.closedByServer.increment();
                            return done + n;
                        }
                    }
                    done += n;
                }
                return done;
            }
        }

        /** Reads one reply; false when the server closed the connection. */
        private boolean reply(DataInputStream in, byte requestType) throws IOException {
            int length;
            try {
                length = Integer.reverseBytes(in.readInt());
            } catch (EOFException closed) {
                return false;
            }
            assertTrue(length >= FrameLayout.RESPONSE_HEADER_LENGTH && length <= FrameLayout.MAX_FRAME_LENGTH,
                    "reply length " + length);
            byte[] body = new byte[length];
            in.readFully(body);
            ByteBuffer b = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
            byte type = b.get(FrameLayout.TYPE_OFFSET);
            if (type == FrameLayout.RESP_ERROR) {
                tally.error(b.getInt(FrameLayout.ERROR_CODE_OFFSET));
                myErrors++;
            } else if (requestType == FrameLayout.REQ_FLUSH && type == FrameLayout.RESP_ACK) {
                tally.acks.increment();
            } else {
                tally.unexpectedSuccess.increment();
            }
            return true;
        }

        /** Random bytes (a length field among them, usually beyond the limit), then close; replies are counted. */
        private int garbage() throws IOException {
            tally.garbageConnections.increment();
            byte[] junk = new byte[1 + random.nextInt(4096)];
            random.nextBytes(junk);
            return sendAndClose(junk, 1);
        }

        /** A frame cut short, then close. */
        private int truncated() throws IOException {
            tally.truncatedConnections.increment();
            byte[] f = frame(FrameLayout.REQ_WRITE, RegionIds.HEAP, 0, 0, 0, new byte[256 + random.nextInt(4096)]);
            return sendAndClose(java.util.Arrays.copyOf(f, 1 + random.nextInt(f.length - 1)), 1);
        }

        /** A length field beyond the frame limit: one error reply, then the server closes. */
        private int oversized() throws IOException {
            tally.oversizedConnections.increment();
            int beyond = random.nextInt(Integer.MAX_VALUE - FrameLayout.MAX_FRAME_LENGTH);
            int length = FrameLayout.MAX_FRAME_LENGTH + beyond;
            ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN).putInt(length);
            long errorsBefore = myErrors;
            sendAndClose(b.array(), 1);
            if (myErrors == errorsBefore + 1) {
                tally.oversizedRefused.increment();
            }
            return 1;
        }

        private int sendAndClose(byte[] bytes, int frames) throws IOException {
            try (Socket s = open()) {
                s.setSoTimeout(2_000);
                s.getOutputStream().write(bytes);
                s.getOutputStream().flush();
                s.shutdownOutput();
                tally.sent.add(frames);
                DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
                try {
                    while (reply(in, (byte) -1)) {
                        // count every reply until the server closes or stays silent
                    }
                    tally.closedByServer.increment();
                } catch (SocketTimeoutException silent) {
                    // a frame still incomplete: the server waits for the rest; we close
                } catch (IOException reset) {
                    tally.closedByServer.increment();
                }
            }
            return frames;
        }

        /** A well-formed frame that no unattached session may have served. */
        private byte[] unauthorised() {
            int region = REGIONS[random.nextInt(REGIONS.length)];
            long offset = random.nextInt(1 << 20) & ~7L;
            switch (random.nextInt(10)) {
                case 0:
                    return frame(FrameLayout.REQ_READ, region, offset, 1 + random.nextInt(4096), 0, null);
                case 1:
                    return frame(FrameLayout.REQ_WRITE, region, offset, 0, 0, new byte[random.nextInt(128)]);
                case 2:
                    return frame(FrameLayout.REQ_CAS, region, offset, 0, random.nextLong(), null);
                case 3:
                    return frame(FrameLayout.REQ_FLUSH, 0, 0, random.nextLong(), 1, null);
                case 4: {
                    int kind = new int[] {ControlMessageLayout.KIND_GRANT_SLAB, ControlMessageLayout.KIND_DETACH}
                            [random.nextInt(2)];
                    return control(ControlMessageLayout.request(kind, random.nextInt(8), 0));
                }
                case 5:
                    return control(ControlMessageLayout.catalogRequest(random.nextBoolean()
                            ? ControlMessageLayout.KIND_CATALOG_LOOKUP : ControlMessageLayout.KIND_CATALOG_BIND,
                            0, "accounts", 1, 1, 1, offset));
                case 6: {
                    // attach with a frontend id this backend does not have (it serves ids 0..7)
                    int id = random.nextBoolean() ? 8 + random.nextInt(1 << 20) : -1 - random.nextInt(1 << 20);
                    return control(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, id, 0));
                }
                case 7:
                    return control(ControlMessageLayout.request(100 + random.nextInt(1000), 0, 0));
                case 8: {
                    byte[] shortBody = new byte[random.nextInt(FrameLayout.REQUEST_HEADER_LENGTH)];
                    random.nextBytes(shortBody);
                    return lengthPrefixed(shortBody);
                }
                default:
                    return frame((byte) (6 + random.nextInt(100)), region, offset, 0, 0, null);
            }
        }
    }
}
