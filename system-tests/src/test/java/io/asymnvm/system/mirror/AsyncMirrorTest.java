package io.asymnvm.system.mirror;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.mirror.AsyncLagBounds;
import io.asymnvm.backend.mirror.MirrorShipper;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.ForwardingConnection;
import io.asymnvm.core.fabric.ForwardingFabric;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.mirror.MirrorNode;
import io.asymnvm.system.Accounts;
import io.asymnvm.testsupport.ShmTempDirFactory;
import io.asymnvm.testsupport.Conditions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ASYNC mirrors (issue 9, item 2): frontends post only to the backend, which ships redo and the frontends' durable
 * semantic records to the mirror periodically within its lag bounds. The mirror converges to the backend's bytes,
 * the lag counters move and return to 0, an exceeded bound is reported, a promoted ASYNC mirror holds every
 * shipped commit (re-executed from the shipped semantic records by a frontend that attaches to it) and lacks at
 * most the lag, a frontend that survives the backend's loss fails over to the promoted ASYNC mirror and loses
 * nothing (it kept every record the mirror had not applied and writes them there again), and the commit path is the
 * unreplicated one (one FLUSH per commit, to the backend only).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AsyncMirrorTest {
    private static final int ACCOUNTS = 8;
    private static final long OPENING = 1_000;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** Counts the FLUSHes posted on its connections. */
    static final class CountingFabric extends ForwardingFabric {
        final AtomicLong flushes = new AtomicLong();

        CountingFabric(Fabric delegate) {
            super(delegate);
        }

        @Override
        protected FabricConnection wrap(FabricConnection connection) {
            return new ForwardingConnection(connection) {
                @Override
                public Completion flush(long stamp, boolean stamped) {
                    flushes.incrementAndGet();
                    return super.flush(stamp, stamped);
                }
            };
        }
    }

    private BackendConfiguration.Builder config(String name) {
        return BackendConfiguration.builder(dir.resolve(name)).size(32L << 20).maxFrontends(2)
                .semRingCapacity(1L << 20).redoRingCapacity(4L << 20);
    }

    private static JsonNode statusOf(BackendNode backend) {
        ObjectNode root = new ObjectMapper().createObjectNode();
        backend.replication().describe(root);
        return root.path("mirrors").get(0);
    }

    /** Redo held in the frontend for up to 10 s: acknowledged commits are semantic records only on the backend. */
    private static FrontendOptions redoHeldBack() {
        return FrontendOptions.builder().redoBatch(1 << 20, 16 << 20, 10_000_000).conclude();
    }

    @Test
    void asyncMirrorConvergesItsLagMovesAndReturnsToZeroAndCommitsFlushOnlyTheBackend() throws Exception {
        BackendConfiguration bc = config("backend.pm").asyncLag(new AsyncLagBounds(200, 10_000)).conclude();
        try (BackendNode backend = BackendNode.start(bc);
             MirrorNode mirror = MirrorNode.startLocal(config("mirror.pm").conclude(), backend, true)) {
            MirrorShipper shipper = backend.replication().shippers().get(0);
            assertTrue(shipper.isAsync(), "the shipper ships an ASYNC mirror");
            Conditions.awaitTrue("the ASYNC mirror is in sync", mirror::inSync);
            CountingFabric counted = new CountingFabric(backend.localFabric());
            long maxUnshipped = 0;
            long maxLagMs = 0;
            int commits = 600;
            try (AsymNvm nvm = AsymNvm.open(counted, 0, FrontendOptions.builder().keepAliveMillis(0).conclude())) {
                Accounts bank = nvm.transactional(Accounts.class, new Accounts.Impl());
                bank.create(ACCOUNTS, OPENING);
                SplittableRandom rnd = new SplittableRandom(7);
                long before = counted.flushes.get();
                for (int i = 0; i < commits; i++) {
                    bank.transfer(rnd.nextInt(ACCOUNTS), rnd.nextInt(ACCOUNTS), rnd.nextInt(1, 10));
                    maxUnshipped = Math.max(maxUnshipped, shipper.unshippedTransactions());
                    maxLagMs = Math.max(maxLagMs, shipper.lagMillis());
                }
                long flushes = counted.flushes.get() - before;
                System.out.printf("ASYNC mirror: %d commits, %d backend FLUSHes; lag seen up to %d tx, %d ms%n",
                        commits, flushes, maxUnshipped, maxLagMs);
                // at most one per commit (a commit the agent's background FLUSH already covered posts none), and
                // the frontend's only fabric is the backend's: nothing is posted to the ASYNC mirror
                assertTrue(flushes <= commits && flushes >= commits * 0.95, flushes + " FLUSHes for " + commits
                        + " commits: expected one per commit, to the backend only (as without mirrors)");
                nvm.sync();
            }
            assertTrue(maxUnshipped > 0, "the lag in transactions never moved");
            Conditions.awaitTrue("the lag returns to 0",
                    () -> shipper.unshippedTransactions() == 0 && shipper.lagMillis() == 0
                    && shipper.lagTransactions(0) == 0);
            backend.awaitReplayed();
            Conditions.awaitTrue("the mirror applied what the backend applied",
                    () -> MirrorReplicationTest.caughtUp(backend, mirror.node()));
            mirror.node().awaitReplayed();
            assertReplica(backend, mirror.node());
            JsonNode s = statusOf(backend);
            assertEquals("async", s.path("mode").asText(), s.toString());
            assertEquals(0, s.path("max_lag_tx").asLong(), s.toString());
            assertEquals(0, s.path("lag_ms").asLong(), s.toString());
            assertTrue(s.path("semantic_records_shipped").asLong() > 0, s.toString());
            assertFalse(shipper.behind(), "within its bounds");
            ObjectNode mirrorStatus = new ObjectMapper().createObjectNode();
            mirror.replication().describe(mirrorStatus);
            assertTrue(mirrorStatus.path("shipments_received").asLong() > 0, mirrorStatus.toString());
        }
    }

    @Test
    void aTransactionBoundExceededIsReportedAndClearsOnceShipped() throws Exception {
        // a pass at least every 500 ms, and as soon as 3 transactions are unshipped
        BackendConfiguration bc = config("backend.pm").asyncLag(new AsyncLagBounds(2_000, 3)).conclude();
        try (BackendNode backend = BackendNode.start(bc);
             MirrorNode mirror = MirrorNode.startLocal(config("mirror.pm").conclude(), backend, true)) {
            MirrorShipper shipper = backend.replication().shippers().get(0);
            Conditions.awaitTrue("the ASYNC mirror is in sync", mirror::inSync);
            try (AsymNvm nvm = AsymNvm.open(backend.localFabric(), 0, FrontendOptions.defaults())) {
                Accounts bank = nvm.transactional(Accounts.class, new Accounts.Impl());
                bank.create(ACCOUNTS, OPENING);
                // a tight loop commits many transactions between two of the shipper's 1 ms samples
                for (int i = 0; i < 2_000 && shipper.boundExceeded() == 0; i++) {
                    bank.transfer(i % ACCOUNTS, (i + 1) % ACCOUNTS, 1);
                }
                assertTrue(shipper.boundExceeded() > 0, "a lag above 3 transactions was never reported");
            }
            Conditions.awaitTrue("the mirror is back within its bounds", () -> !shipper.behind()
                    && shipper.unshippedTransactions() == 0);
            JsonNode s = statusOf(backend);
            assertTrue(s.path("bound_exceeded").asLong() > 0, s.toString());
            assertEquals(3, s.path("bound_lag_tx").asLong(), s.toString());
        }
    }

    @Test
    void promotedAsyncMirrorHoldsEveryShippedCommitAndLosesAtMostTheLag() throws Exception {
        Path backendPm = dir.resolve("backend.pm");
        long maxLagTx = 40;
        BackendConfiguration bc = config("backend.pm").asyncLag(new AsyncLagBounds(60_000, maxLagTx)).conclude();
        BackendNode backend = BackendNode.start(bc);
        List<long[]> acknowledged = new ArrayList<>();
        long unshippedAtLoss;
        long appliedOnMirrorAtLoss;
        try (MirrorNode mirror = MirrorNode.startLocal(config("mirror.pm").conclude(), backend, true)) {
            MirrorShipper shipper = backend.replication().shippers().get(0);
            Conditions.awaitTrue("the ASYNC mirror is in sync", mirror::inSync);
            AsymNvm nvm = AsymNvm.open(backend.localFabric(), 0, redoHeldBack());
            Accounts bank = nvm.transactional(Accounts.class, new Accounts.Impl());
            bank.create(ACCOUNTS, OPENING);
            nvm.sync();
            SplittableRandom rnd = new SplittableRandom(11);
            for (int i = 0; i < 150; i++) {
                long[] t = {rnd.nextInt(ACCOUNTS), rnd.nextInt(ACCOUNTS), rnd.nextInt(1, 50)};
                bank.transfer((int) t[0], (int) t[1], t[2]);
                acknowledged.add(t); // acknowledged: its semantic record is durable on the backend
            }
            // the shipper's counter settles on what the mirror lacks: the backend's last durable record's tx id
            // minus the last one shipped to the mirror's semantic ring
            long lastDurable = backend.frontendLog(0).scanSemantic().lastTxId();
            Conditions.awaitTrue("the unshipped counter matches the rings", () -> shipper.unshippedTransactions()
                    == lastDurable - mirror.node().frontendLog(0).scanSemantic().lastTxId());
            unshippedAtLoss = shipper.unshippedTransactions();
            appliedOnMirrorAtLoss = mirror.node().frontendLog(0).checkpoint().appliedTxId();
            nvm.crash();            // the frontend process goes with the backend's machine in this run
            backend.close();
            Files.delete(backendPm); // the backend is lost for good
            long epoch = mirror.promote();
            assertEquals(2, epoch, "promoted to epoch 2");
            try (AsymNvm onMirror = AsymNvm.open(mirror.localFabric(), 0, FrontendOptions.defaults())) {
                Accounts promoted = onMirror.transactional(Accounts.class, new Accounts.Impl());
                var report = onMirror.recover();
                long[] balances = new long[ACCOUNTS];
                for (int a = 0; a < ACCOUNTS; a++) {
                    balances[a] = promoted.balance(a);
                }
                int present = prefixMatching(acknowledged, balances);
                long lost = acknowledged.size() - present;
                System.out.printf("ASYNC promotion: %d acknowledged, %d lost (%d unshipped at the loss, bound %d),"
                        + " mirror had applied tx %d, %d re-executed from shipped semantic records%n",
                        acknowledged.size(), lost, unshippedAtLoss, maxLagTx, appliedOnMirrorAtLoss,
                        report.transactions());
                assertTrue(present >= 0, "the promoted balances are no prefix of the acknowledged transfers: "
                        + Arrays.toString(balances));
                assertEquals(unshippedAtLoss, lost, "lost exactly what the shipper reported unshipped");
                assertTrue(lost <= maxLagTx || shipper.boundExceeded() > 0, "lost " + lost + " > the bound "
                        + maxLagTx + " and the exceeded bound was never reported");
                assertTrue(report.transactions() > 0, "nothing came from the shipped semantic records (the redo "
                        + "was held in the frontend: every transfer reached the mirror as a semantic record)");
                assertEquals(ACCOUNTS * OPENING, Arrays.stream(balances).sum(), "money created or destroyed");
            }
        } finally {
            backend.close();
        }
    }

    @Test
    void aSurvivingFrontendFailsOverToThePromotedAsyncMirrorAndLosesNothing() throws Exception {
        Path backendPm = dir.resolve("backend.pm");
        Path credentials = dir.resolve("cluster.credentials");
        // a 60 s bound ships every 15 s: after the image copy nothing reaches the mirror during this run
        BackendNode backend = BackendNode.start(config("backend.pm").port(0).credentials(credentials)
                .asyncLag(new AsyncLagBounds(60_000, 10_000)).conclude());
        MirrorNode mirror = null;
        try {
            mirror = MirrorNode.start(config("mirror.pm").port(0).credentials(credentials).conclude(), "127.0.0.1",
                    backend.port(), true);
            MirrorNode m = mirror;
            Conditions.awaitTrue("the ASYNC mirror is in sync", m::inSync);
            MirrorShipper shipper = backend.replication().shippers().get(0);
            FrontendOptions options = FrontendOptions.builder().credentials(credentials).reconnectTimeoutMillis(300)
                    .failoverTimeoutMillis(20_000).conclude();
            List<long[]> acknowledged = new ArrayList<>();
            try (AsymNvm nvm = AsymNvm.connect("tcp", "127.0.0.1:" + backend.port(), List.of(),
                    List.of("127.0.0.1:" + m.port()), 0, options)) {
                assertEquals(List.of("127.0.0.1:" + m.port()), nvm.mirrors(), "the ASYNC mirror is watched");
                Accounts bank = nvm.transactional(Accounts.class, new Accounts.Impl());
                bank.create(ACCOUNTS, OPENING);
                SplittableRandom rnd = new SplittableRandom(5);
                for (int i = 0; i < 200; i++) {
                    long[] t = {rnd.nextInt(ACCOUNTS), rnd.nextInt(ACCOUNTS), rnd.nextInt(1, 50)};
                    bank.transfer((int) t[0], (int) t[1], t[2]);
                    acknowledged.add(t);
                }
                backend.awaitReplayed();
                long applied = backend.frontendLog(0).checkpoint().appliedTxId();
                long onMirror = m.node().frontendLog(0).checkpoint().appliedTxId();
                long unshipped = shipper.unshippedTransactions();
                assertTrue(onMirror < applied, "the mirror should lack commits the backend applied: " + onMirror
                        + " vs " + applied);
                backend.close();
                Files.delete(backendPm); // lost for good, with every commit the mirror was not shipped
                long epoch = m.promote();
                for (int i = 0; i < 20; i++) { // the frontend finds the promoted mirror and resumes on it
                    long[] t = {rnd.nextInt(ACCOUNTS), rnd.nextInt(ACCOUNTS), rnd.nextInt(1, 50)};
                    bank.transfer((int) t[0], (int) t[1], t[2]);
                    acknowledged.add(t);
                }
                long[] balances = new long[ACCOUNTS];
                for (int a = 0; a < ACCOUNTS; a++) {
                    balances[a] = bank.balance(a);
                }
                System.out.printf("ASYNC failover with a surviving frontend: the mirror had applied tx %d of %d "
                        + "(%d unshipped), promoted to epoch %d; failovers %d, resume %d ms%n", onMirror, applied,
                        unshipped, epoch, nvm.stats().failovers(), nvm.stats().failoverResumeMillis());
                assertEquals(1, nvm.stats().failovers(), "the frontend failed over once");
                assertEquals(acknowledged.size(), prefixMatching(acknowledged, balances),
                        "every acknowledged transfer is on the promoted ASYNC mirror: " + Arrays.toString(balances));
            }
        } finally {
            if (mirror != null) {
                mirror.close();
            }
            backend.close();
        }
    }

    /** The length of the prefix of {@code transfers} whose balances are {@code balances}, or -1 if none. */
    private static int prefixMatching(List<long[]> transfers, long[] balances) {
        long[] b = new long[ACCOUNTS];
        Arrays.fill(b, OPENING);
        int match = Arrays.equals(b, balances) ? 0 : -1;
        for (int i = 0; i < transfers.size(); i++) {
            long[] t = transfers.get(i);
            b[(int) t[0]] -= t[2];
            b[(int) t[1]] += t[2];
            if (Arrays.equals(b, balances)) {
                match = i + 1;
            }
        }
        return match;
    }

    @Test
    void lagBoundsAreValidatedNamingValueAndLimit() {
        IllegalArgumentException ms = assertThrows(IllegalArgumentException.class, () -> new AsyncLagBounds(0, 10));
        assertTrue(ms.getMessage().contains("--async-max-lag-ms") && ms.getMessage().contains(": 0")
                && ms.getMessage().contains("[1, " + AsyncLagBounds.MAX_LAG_MILLIS + "]"), ms.getMessage());
        IllegalArgumentException tx = assertThrows(IllegalArgumentException.class, () -> new AsyncLagBounds(5, -2));
        assertTrue(tx.getMessage().contains("--async-max-lag-tx") && tx.getMessage().contains(": -2"),
                tx.getMessage());
        assertEquals(25, new AsyncLagBounds(100, 1).shipIntervalMillis(), "a quarter of the time bound");
    }

    /** Heap bytes of every owned slab, semantic heads and slab tables equal. */
    private static void assertReplica(BackendNode backend, BackendNode mirror) throws IOException {
        Superblock sb = backend.superblock();
        assertArrayEquals(backend.slabs().ownerWords(), mirror.slabs().ownerWords(), "slab owner tables");
        Path b = backend.configuration().pmFile();
        Path m = mirror.configuration().pmFile();
        int compared = 0;
        for (int f = 0; f < 2; f++) {
            assertEquals(backend.frontendLog(f).checkpoint().semHead(), mirror.frontendLog(f).checkpoint().semHead(),
                    "semantic head of frontend " + f);
            for (long s : backend.slabs().ownedBy(f)) {
                byte[] x = MirrorReplicationTest.read(b, sb.slabOffset(s), (int) sb.slabSize());
                byte[] y = MirrorReplicationTest.read(m, sb.slabOffset(s), (int) sb.slabSize());
                assertTrue(Arrays.equals(x, y), "heap bytes of slab " + s + " differ at " + Arrays.mismatch(x, y));
                compared++;
            }
        }
        assertTrue(compared > 0, "no slab compared");
    }
}
