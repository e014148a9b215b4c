package io.asymnvm.system.mirror;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.mirror.MirrorShipper;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.auth.AttachProof;
import io.asymnvm.core.auth.FrontendCredentials;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.layout.ControlBlockLayout.Checkpoint;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.mirror.MirrorNode;
import io.asymnvm.mirror.ReplicationClient;
import io.asymnvm.structures.PersistentBTree;
import io.asymnvm.structures.PersistentHashMap;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.testsupport.ShmTempDirFactory;
import io.asymnvm.testsupport.Conditions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Mirrors (issue 9): the backend ships redo and its slab table to a mirror, which replays it with the same code;
 * the mirror's heap and checkpoints equal the backend's; a promoted mirror serves every applied transaction under
 * a new epoch; and the refusals (other image, stale epoch, two backends in one epoch, wrong secret, slab grants on
 * a mirror, promotion while catching up) write nothing.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MirrorReplicationTest {
    private static final int FRONTENDS = 2;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** A few structures to commit into. */
    public interface Store {
        @PersistentTransaction
        void put(long key, String value);

        @PersistentTransaction
        void remove(long key);

        @PersistentTransaction(readOnly = true)
        String tree(long key);

        @PersistentTransaction(readOnly = true)
        String hash(long key);
    }

    static final class StoreImpl implements Store {
        private final PersistentBTree<Long, String> tree;
        private final PersistentHashMap<Long, String> hash;

        StoreImpl(AsymNvm nvm) {
            this(nvm, "");
        }

        StoreImpl(AsymNvm nvm, String prefix) {
            this.tree = PersistentBTree.open(nvm, prefix + "tree", Codecs.LONG, Codecs.STRING);
            this.hash = PersistentHashMap.open(nvm, prefix + "hash", Codecs.LONG, Codecs.STRING);
        }

        @Override
        public void remove(long key) {
            if ((key & 1) == 0) {
                tree.remove(key);
            } else {
                hash.remove(key);
            }
        }

        @Override
        public void put(long key, String value) {
            if ((key & 1) == 0) {
                tree.put(key, value);
            } else {
                hash.put(key, value);
            }
        }

        @Override
        public String tree(long key) {
            return tree.get(key);
        }

        @Override
        public String hash(long key) {
            return hash.get(key);
        }
    }

    static String value(long key) {
        char[] c = new char[1024];
        Arrays.fill(c, (char) ('a' + (key % 26)));
        return key + ":" + new String(c, 0, 1000);
    }

    private BackendConfiguration.Builder config(String name) {
        return BackendConfiguration.builder(dir.resolve(name)).size(48L << 20).maxFrontends(FRONTENDS)
                .semRingCapacity(1L << 20).redoRingCapacity(4L << 20);
    }

    static boolean caughtUp(BackendNode backend, BackendNode mirror) {
        for (int f = 0; f < FRONTENDS; f++) {
            Checkpoint b = backend.frontendLog(f).checkpoint();
            Checkpoint m = mirror.frontendLog(f).checkpoint();
            if (b.appliedTxId() != m.appliedTxId() || b.redoHead() != m.redoHead()) {
                return false;
            }
        }
        return true;
    }

    /** Heap bytes of every slab either side owns, checkpoints and slab tables equal. */
    private static void assertReplica(BackendNode backend, BackendNode mirror) throws IOException {
        Superblock sb = backend.superblock();
        assertArrayEquals(backend.slabs().ownerWords(), mirror.slabs().ownerWords(), "slab owner tables");
        int compared = 0;
        for (int f = 0; f < FRONTENDS; f++) {
            Checkpoint b = backend.frontendLog(f).checkpoint();
            Checkpoint m = mirror.frontendLog(f).checkpoint();
            assertEquals(b.appliedTxId(), m.appliedTxId(), "applied tx of frontend " + f);
            assertEquals(b.redoHead(), m.redoHead(), "redo head of frontend " + f);
            assertEquals(b.semHead(), m.semHead(), "semantic head of frontend " + f);
            for (long s : backend.slabs().ownedBy(f)) {
                byte[] a = read(backend.configuration().pmFile(), sb.slabOffset(s), (int) sb.slabSize());
                byte[] c = read(mirror.configuration().pmFile(), sb.slabOffset(s), (int) sb.slabSize());
                assertTrue(Arrays.equals(a, c), "heap bytes of slab " + s + " (frontend " + f + ") differ at "
                        + Arrays.mismatch(a, c));
                compared++;
            }
        }
        assertTrue(compared > 0, "no slab compared");
    }

    static byte[] read(Path file, long at, int length) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(length);
            while (b.hasRemaining() && ch.read(b, at + b.position()) > 0) {
                // read fully
            }
            return b.array();
        }
    }

    private static long crcOf(Path file) throws IOException {
        CRC32C c = new CRC32C();
        c.update(Files.readAllBytes(file));
        return c.getValue();
    }

    @Test
    void mirrorOverLocalReplaysToTheBackendsBytes() throws Exception {
        try (BackendNode backend = BackendNode.start(config("backend.pm").conclude());
             MirrorNode mirror = MirrorNode.startLocal(config("mirror.pm").conclude(), backend)) {
            assertEquals(backend.superblock().identity(), mirror.node().superblock().identity(), "image identity");
            try (AsymNvm nvm = AsymNvm.open(backend.localFabric(), 0, FrontendOptions.defaults())) {
                Store store = nvm.transactional(Store.class, new StoreImpl(nvm));
                for (long k = 0; k < 3000; k++) {
                    store.put(k, value(k));
                }
                nvm.sync();
            }
            backend.awaitReplayed();
            Conditions.awaitTrue("the mirror applied what the backend applied", () -> caughtUp(backend, mirror.node()));
            mirror.node().awaitReplayed();
            // a frontend that detached is waited for until the shipper read that the mirror applied its commits
            Conditions.awaitTrue("the mirror is in sync", mirror::inSync);
            assertReplica(backend, mirror.node());
            MirrorShipper shipper = backend.replication().shippers().get(0);
            assertTrue(shipper.batchesShipped() > 0, "no batch shipped");
            Conditions.awaitTrue("the lag counter reads 0 once caught up", () -> shipper.lagTransactions(0) == 0);
            System.out.printf("local mirror: %d batches, %d bytes shipped%n", shipper.batchesShipped(),
                    shipper.bytesShipped());
        }
    }

    @Test
    void slabsReturnedByOneFrontendAndGrantedToAnotherReachTheMirrorInOrder() throws Exception {
        try (BackendNode backend = BackendNode.start(config("backend.pm").conclude());
             MirrorNode mirror = MirrorNode.startLocal(config("mirror.pm").conclude(), backend)) {
            long[] returned;
            try (AsymNvm first = AsymNvm.open(backend.localFabric(), 0, FrontendOptions.defaults())) {
                Store store = first.transactional(Store.class, new StoreImpl(first, "first-"));
                for (long k = 0; k < 2000; k++) {
                    store.put(k, value(k));
                }
                long[] before = backend.slabs().ownedBy(0);
                for (long k = 0; k < 2000; k++) {
                    store.remove(k);
                }
                first.sync();
                first.returnEmptySlabs();
                long[] after = backend.slabs().ownedBy(0);
                returned = Arrays.stream(before).filter(x -> Arrays.stream(after).noneMatch(y -> y == x)).toArray();
            }
            assertTrue(returned.length > 0, "the first frontend returned no slab");
            try (AsymNvm second = AsymNvm.open(backend.localFabric(), 1, FrontendOptions.defaults())) {
                Store store = second.transactional(Store.class, new StoreImpl(second, "second-"));
                for (long k = 0; k < 2500; k++) {
                    store.put(k, value(k + 7));
                }
                second.sync();
            }
            long[] reused = Arrays.stream(backend.slabs().ownedBy(1))
                    .filter(x -> Arrays.stream(returned).anyMatch(y -> y == x)).toArray();
            assertTrue(reused.length > 0, "no returned slab was granted to the second frontend: "
                    + Arrays.toString(returned) + " vs " + Arrays.toString(backend.slabs().ownedBy(1)));
            backend.awaitReplayed();
            Conditions.awaitTrue("the mirror applied both frontends", () -> caughtUp(backend, mirror.node()));
            mirror.node().awaitReplayed();
            assertReplica(backend, mirror.node());
            System.out.printf("slab reuse: %d returned by frontend 0, %d of them granted to frontend 1%n",
                    returned.length, reused.length);
        }
    }

    @Test
    void promotedMirrorOverTcpServesEveryAppliedTransactionUnderANewEpoch() throws Exception {
        Path backendPm = dir.resolve("backend.pm");
        Path credentials = dir.resolve("cluster.credentials");
        BackendNode backend = BackendNode.start(config("backend.pm").port(0).credentials(credentials).conclude());
        MirrorNode mirror = null;
        try {
            long joining = System.nanoTime();
            mirror = MirrorNode.start(config("mirror.pm").port(0).credentials(credentials).conclude(), "127.0.0.1",
                    backend.port());
            long epoch = backend.replication().epoch();
            MirrorNode joined = mirror;
            Conditions.awaitTrue("the new mirror is in sync", joined::inSync);
            System.out.printf("tcp mirror of a %d-byte heap in sync after %.0f ms%n",
                    backend.superblock().slabCount() * backend.superblock().slabSize(),
                    (System.nanoTime() - joining) / 1e6);
            FrontendOptions options = FrontendOptions.builder().credentials(credentials).conclude();
            try (AsymNvm nvm = AsymNvm.connect("127.0.0.1", backend.port(), 0, options)) {
                Store store = nvm.transactional(Store.class, new StoreImpl(nvm));
                for (long k = 0; k < 1500; k++) {
                    store.put(k, value(k));
                }
                nvm.sync();
            }
            backend.awaitReplayed();
            BackendNode m = mirror.node();
            Conditions.awaitTrue("the mirror caught up over tcp", () -> caughtUp(backend, m) && mirror(m));
            assertReplica(backend, m);
            String status = status(backend.port());
            assertTrue(status.contains("\"mirrors\":[{") && status.contains("\"role\":\"backend\""), status);
            assertTrue(status(m.port()).contains("\"role\":\"mirror\""), status(m.port()));

            backend.close();
            Files.delete(backendPm); // the backend is lost for good
            byte[] secret = ReplicationClient.secretOf(credentials);
            try (Fabric f = new TcpFabric("127.0.0.1", m.port())) {
                long promoting = System.nanoTime();
                assertEquals(epoch + 1, ReplicationClient.promote(f, secret), "the promoted epoch");
                System.out.printf("promotion over tcp took %.1f ms%n", (System.nanoTime() - promoting) / 1e6);
                AsymNvmException again = assertThrows(AsymNvmException.class,
                        () -> ReplicationClient.promote(f, secret));
                assertEquals(ErrorCode.STALE_EPOCH, again.errorCode(), again.getMessage());
            }
            assertTrue(status(m.port()).contains("\"role\":\"backend\""), status(m.port()));
            try (AsymNvm nvm = AsymNvm.connect("127.0.0.1", m.port(), 0, options)) {
                Store store = nvm.transactional(Store.class, new StoreImpl(nvm));
                nvm.recover();
                for (long k = 0; k < 1500; k++) {
                    assertEquals(value(k), (k & 1) == 0 ? store.tree(k) : store.hash(k), "key " + k);
                }
                store.put(5000, value(5000));
                assertEquals(value(5000), store.tree(5000), "a new commit on the promoted node");
            }
            assertEquals(epoch + 1, ByteBuffer.wrap(read(m.configuration().pmFile(),
                    SuperblockLayout.PROMOTED_EPOCH_OFFSET, 8)).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(),
                    "the promoted epoch persisted");
            io.asymnvm.backend.InspectReport inspected = io.asymnvm.backend.InspectTool.inspect(
                    m.configuration().pmFile());
            assertEquals(epoch + 1, inspected.effectiveEpoch(), "inspect shows the promoted epoch");
            assertTrue(inspected.toText().contains("promoted from a mirror"), inspected.toText());
        } finally {
            if (mirror != null) {
                mirror.close();
            }
            backend.close();
        }
    }

    private static boolean mirror(BackendNode m) {
        return m.replication().state() == ReplicationLayout.STATE_IN_SYNC;
    }

    private static String status(int port) {
        try (Fabric f = new TcpFabric("127.0.0.1", port); FabricConnection c = f.connect()) {
            return new String(c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_STATUS, 0, 0)).await()
                    .bytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    /** PEER_ATTACH as a backend of {@code epoch} and {@code identity} would send it. */
    private static byte[] peerAttach(FabricConnection c, byte[] secret, long epoch, UUID identity) {
        byte[] nonce = c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_CHALLENGE, 0, 0)).await().bytes();
        byte[] proof = AttachProof.compute(secret, nonce, ReplicationLayout.PURPOSE_PEER_ATTACH, epoch);
        return c.call(ReplicationLayout.peerAttach(epoch, identity, proof)).await().bytes();
    }

    private static void assertRefused(ErrorCode code, Runnable call, String... mentions) {
        AsymNvmException e = assertThrows(AsymNvmException.class, call::run);
        assertEquals(code, e.errorCode(), e.getMessage());
        for (String m : mentions) {
            assertTrue(e.getMessage().contains(m), "'" + m + "' in: " + e.getMessage());
        }
    }

    @Test
    void refusalsOverTcpWriteNothing() throws Exception {
        Path credentials = dir.resolve("cluster.credentials");
        Superblock backendSb;
        try (BackendNode backend = BackendNode.start(config("backend.pm").conclude())) {
            backendSb = SuperblockLayout.withEpoch(backend.superblock(), 5);
        }
        try (BackendNode mirror = BackendNode.startMirror(config("mirror.pm").port(0).credentials(credentials)
                .conclude(), backendSb)) {
            Path pm = mirror.configuration().pmFile();
            byte[] secret = ReplicationClient.secretOf(credentials);
            FrontendCredentials other = FrontendCredentials.createIfAbsent(dir.resolve("other.credentials"), 1);
            long before = crcOf(pm);
            try (Fabric f = new TcpFabric("127.0.0.1", mirror.port())) {
                try (FabricConnection c = f.connect()) {
                    assertRefused(ErrorCode.IDENTITY_MISMATCH, () -> peerAttach(c, secret, 5, UUID.randomUUID()),
                            backendSb.identity().toString());
                }
                try (FabricConnection c = f.connect()) {
                    assertRefused(ErrorCode.STALE_EPOCH, () -> peerAttach(c, secret, 4, backendSb.identity()),
                            "epoch 4", "epoch 5");
                }
                try (FabricConnection c = f.connect()) {
                    assertRefused(ErrorCode.AUTH_FAILED,
                            () -> peerAttach(c, other.replicationSecret(), 5, backendSb.identity()));
                }
                try (FabricConnection c = f.connect()) {
                    assertRefused(ErrorCode.REPLICA_BEHIND, () -> ReplicationClient.promote(f, secret),
                            "catching up");
                }
            }
            assertEquals(before, crcOf(pm), "a refused peer, secret or promotion changed the mirror's image");
            assertEquals(5, mirror.replication().epoch());
        }
    }

    @Test
    void mirrorRefusesSlabsAndCatalogAndAPromotedNodeRefusesABackendOfItsEpoch() throws Exception {
        try (BackendNode backend = BackendNode.start(config("backend.pm").conclude());
             MirrorNode mirror = MirrorNode.startLocal(config("mirror.pm").conclude(), backend)) {
            Conditions.awaitTrue("the empty mirror is in sync", mirror::inSync);
            try (FabricConnection c = mirror.localFabric().connect()) {
                ControlMessageLayout.AttachReply reply = ControlMessageLayout.AttachReply.decode(
                        c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, 1, 0)).await().bytes());
                assertTrue(reply.isMirror(), "role of the attach reply");
                assertEquals(backend.replication().epoch(), reply.backendEpoch());
                Path pm = mirror.node().configuration().pmFile();
                long before = crcOf(pm);
                assertRefused(ErrorCode.NOT_PRIMARY, () -> c.call(ControlMessageLayout.request(
                        ControlMessageLayout.KIND_GRANT_SLAB, 1, 0)).await(), "mirror", "epoch");
                assertRefused(ErrorCode.NOT_PRIMARY, () -> c.call(ControlMessageLayout.catalogRequest(
                        ControlMessageLayout.KIND_CATALOG_LOOKUP, 1, "x", 0, 0, 0, 0)).await(), "mirror");
                assertRefused(ErrorCode.ACCESS_DENIED, () -> c.read(io.asymnvm.core.layout.RegionIds.HEAP, 0, 8)
                        .await());
                assertEquals(before, crcOf(pm), "a refused grant changed the mirror's image");
            }
            long epoch = mirror.promote();
            assertEquals(backend.replication().epoch() + 1, epoch);
            long promotedImage = crcOf(mirror.node().configuration().pmFile());
            // the old backend (still at the old epoch) and a second backend claiming the promoted epoch are refused
            try (FabricConnection c = mirror.localFabric().connect()) {
                assertRefused(ErrorCode.STALE_EPOCH, () -> peerAttach(c, new byte[32], epoch,
                        backend.superblock().identity()), "two backends claim epoch " + epoch);
                assertRefused(ErrorCode.STALE_EPOCH, () -> peerAttach(c, new byte[32], epoch - 1,
                        backend.superblock().identity()), "epoch " + (epoch - 1));
            }
            assertEquals(promotedImage, crcOf(mirror.node().configuration().pmFile()),
                    "a refused peer attach wrote to the promoted node's image");
            MirrorShipper old = backend.replication().shippers().get(0);
            Conditions.awaitTrue("the old backend's shipper is refused (" + old.phase() + ", " + old.problem() + ")",
                    () -> old.phase() == MirrorShipper.Phase.REFUSED);
            assertTrue(old.problem().contains("epoch"), old.problem());
        }
    }

    @Test
    void mirrorJoiningWhileAFrontendCommitsCatchesUpAndMatches() throws Exception {
        try (BackendNode backend = BackendNode.start(config("backend.pm").conclude())) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong committed = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            try (AsymNvm nvm = AsymNvm.open(backend.localFabric(), 0, FrontendOptions.defaults())) {
                Store store = nvm.transactional(Store.class, new StoreImpl(nvm));
                Thread writer = new Thread(() -> {
                    try {
                        for (long k = 0; !stop.get() && k < 100_000; k++) {
                            store.put(k % 4000, value(k));
                            committed.incrementAndGet();
                            // Until it adds the mirror this frontend does not hold ring space for it, so a committer
                            // faster than the shipper for a whole ring laps it, and the mirror then needs a new copy
                            // (by design, see MirrorShipper). On a loaded 2-core CI machine that happened; a short
                            // pause keeps this test about catching up, not about being lapped.
                            if (k % 16 == 0) {
                                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                            }
                        }
                    } catch (Throwable t) {
                        failure.set(t);
                    }
                }, "committer");
                writer.start();
                Conditions.awaitTrue("some commits before the mirror joins",
                        () -> committed.get() > 500 || failure.get() != null);
                try (MirrorNode mirror = MirrorNode.startLocal(config("mirror.pm").conclude(), backend)) {
                    // the committing frontend is attached to the backend: the mirror is in sync only once it
                    // declared it SYNC, i.e. added it at run time (re-posting its retained records)
                    nvm.addMirror(mirror.localFabric(), "mirror");
                    Conditions.awaitTrue("the mirror is in sync while commits go on",
                            () -> mirror.inSync() || failure.get() != null);
                    long atSync = committed.get();
                    Conditions.awaitTrue("more commits after the sync", () -> committed.get() > atSync + 500
                            || failure.get() != null);
                    stop.set(true);
                    writer.join(30_000);
                    assertNull(failure.get(), () -> "committer failed: " + failure.get());
                    nvm.sync();
                    backend.awaitReplayed();
                    Conditions.awaitTrue("the mirror applied everything", () -> caughtUp(backend, mirror.node()));
                    mirror.node().awaitReplayed();
                    assertReplica(backend, mirror.node());
                    System.out.printf("catch-up: %d commits, in sync after %d%n", committed.get(), atSync);
                    nvm.dropMirror("mirror"); // before the mirror node closes under it
                }
            }
            assertNotNull(backend.replication());
        }
    }
}
