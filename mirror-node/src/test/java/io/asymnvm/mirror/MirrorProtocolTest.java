package io.asymnvm.mirror;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.PostingEpoch;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A mirror's control plane driven message by message over the local fabric (the peer side as a backend's shipper
 * would drive it): frontends get their semantic ring and FLUSH watermark only; a mirror that is catching up
 * refuses promotion naming both transaction ids; promotion closes every connection and serves as backend.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MirrorProtocolTest {
    private static final int FRONTENDS = 2;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private BackendConfiguration config(String name) {
        return BackendConfiguration.builder(dir.resolve(name)).size(24L << 20).maxFrontends(FRONTENDS)
                .semRingCapacity(256L << 10).redoRingCapacity(1L << 20).conclude();
    }

    /** A mirror of a backend image made and closed here (its superblock is all a mirror needs to format). */
    private BackendNode mirror() {
        Superblock sb;
        try (BackendNode backend = BackendNode.start(config("backend.pm"))) {
            sb = backend.superblock();
        }
        return BackendNode.startMirror(config("mirror.pm"), sb);
    }

    private static byte[] peerAttach(FabricConnection c, Superblock sb) {
        return c.call(ReplicationLayout.peerAttach(sb.epoch(), sb.identity(),
                new byte[ControlMessageLayout.PROOF_LENGTH])).await().bytes();
    }

    private static long crc(Path file) throws IOException {
        CRC32C c = new CRC32C();
        c.update(Files.readAllBytes(file));
        return c.getValue();
    }

    private static void awaitState(BackendNode m, int state) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (m.replication().state() != state) {
            assertTrue(System.nanoTime() < deadline, "state " + m.replication().state() + ", expected " + state);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    @Test
    void catchingUpMirrorRefusesPromotionNamingBothTransactionIds() throws IOException {
        try (BackendNode m = mirror(); FabricConnection peer = m.localFabric().connect()) {
            int slabs = (int) m.superblock().slabCount();
            ReplicationLayout.PeerReply reply = ReplicationLayout.PeerReply.decode(peerAttach(peer, m.superblock()));
            assertEquals(ReplicationLayout.STATE_CATCHING_UP, reply.state());
            long[][] entries = new long[FRONTENDS][4];
            entries[0][3] = 7; // the backend had applied tx 7 when the copy ended; the copy's checkpoint is tx 0
            peer.call(ReplicationLayout.Replicate.copyDone(entries, new long[slabs]).encode()).await();
            long before = crc(m.configuration().pmFile());
            AsymNvmException e = assertThrows(AsymNvmException.class, m::promote);
            assertEquals(ErrorCode.REPLICA_BEHIND, e.errorCode(), e.getMessage());
            assertTrue(e.getMessage().contains("applied tx 0") && e.getMessage().contains("applied tx 7"),
                    e.getMessage());
            assertEquals(before, crc(m.configuration().pmFile()), "a refused promotion wrote to the image");
            assertTrue(m.replication().isMirror());
        }
    }

    /**
     * Issue 9, a mirror joining while frontends run: its copy caught up, but frontend 1 is attached to the backend
     * (attach epoch 3) and has not declared the mirror SYNC, so its acknowledged commits may be on the backend only:
     * the mirror stays catching up and refuses promotion naming frontend 1. A declaration under another attach
     * epoch (an older incarnation) or from a session of another frontend does not count; frontend 1's own, once
     * the mirror applied its "since" transaction, makes it in sync.
     */
    @Test
    void mirrorIsInSyncOnlyOnceEveryFrontendAttachedToTheBackendDeclaredIt() {
        try (BackendNode m = mirror(); FabricConnection peer = m.localFabric().connect();
             FabricConnection fe1 = m.localFabric().connect(); FabricConnection fe0 = m.localFabric().connect()) {
            int slabs = (int) m.superblock().slabCount();
            peerAttach(peer, m.superblock());
            long[] attached = {0, 3};
            peer.call(ReplicationLayout.frontends(attached)).await();
            long[][] entries = new long[FRONTENDS][4];
            peer.call(ReplicationLayout.Replicate.copyDone(entries, new long[slabs]).encode()).await();
            assertEquals(ReplicationLayout.STATE_CATCHING_UP, m.replication().state(), "copy done, frontend 1 silent");
            AsymNvmException refused = assertThrows(AsymNvmException.class, m::promote);
            assertEquals(ErrorCode.REPLICA_BEHIND, refused.errorCode(), refused.getMessage());
            assertTrue(refused.getMessage().contains("frontend 1") && refused.getMessage().contains("attach epoch 3"),
                    refused.getMessage());

            fe0.call(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, 0, 0)).await();
            AsymNvmException other = assertThrows(AsymNvmException.class,
                    () -> fe0.call(ReplicationLayout.posting(1, 3, 0)).await());
            assertEquals(ErrorCode.NOT_ATTACHED, other.errorCode(), other.getMessage());
            fe1.call(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, 1, 0)).await();
            fe1.call(ReplicationLayout.posting(1, 2, 0)).await(); // an older incarnation's epoch
            assertEquals(ReplicationLayout.STATE_CATCHING_UP, m.replication().state(), "declared under epoch 2");
            AsymNvmException stale = assertThrows(AsymNvmException.class, m::promote);
            assertTrue(stale.getMessage().contains("names attach epoch 2"), stale.getMessage());
            AsymNvmException bad = assertThrows(AsymNvmException.class,
                    () -> fe1.call(ReplicationLayout.posting(1, 0, 0)).await());
            assertEquals(ErrorCode.BAD_REQUEST, bad.errorCode(), bad.getMessage());

            fe1.call(ReplicationLayout.posting(1, 3, 5)).await(); // posts from tx 6; the mirror applied tx 0
            assertEquals(ReplicationLayout.STATE_CATCHING_UP, m.replication().state(), "tx 5 not applied here");
            AsymNvmException behind = assertThrows(AsymNvmException.class, m::promote);
            assertTrue(behind.getMessage().contains("frontend 1 posts here from tx 6"), behind.getMessage());

            fe1.call(ReplicationLayout.posting(1, 3, 0)).await();
            awaitState(m, ReplicationLayout.STATE_IN_SYNC);
            attached[0] = 9; // frontend 0 attaches to the backend later: an in-sync mirror stays in sync
            peer.call(ReplicationLayout.frontends(attached)).await();
            assertEquals(ReplicationLayout.STATE_IN_SYNC, m.replication().state());
        }
    }

    /**
     * A frontend that drops this mirror raises its posting generation on the backend, which reports it: an in-sync
     * mirror whose declaration it voids turns catching up (before the backend's reply lets the frontend acknowledge
     * commits without it) and refuses promotion naming the frontend; a declaration under the raised generation makes
     * it in sync again. A declaration already under the raised generation (a mirror the frontend keeps, re-declared
     * before the raise) is not voided, and a new attach epoch alone voids nothing.
     */
    @Test
    void anInSyncMirrorWhoseDeclarationARaisedPostingGenerationVoidsTurnsCatchingUp() {
        try (BackendNode m = mirror(); FabricConnection peer = m.localFabric().connect();
             FabricConnection fe1 = m.localFabric().connect()) {
            long[] attached = inSyncWithFrontendOneDeclared(m, peer, fe1);

            attached[1] = PostingEpoch.pack(3, 1); // frontend 1 dropped a mirror under attach epoch 3
            peer.call(ReplicationLayout.frontends(attached)).await();
            assertEquals(ReplicationLayout.STATE_CATCHING_UP, m.replication().state(), "voided, still in sync");
            AsymNvmException refused = assertThrows(AsymNvmException.class, m::promote);
            assertEquals(ErrorCode.REPLICA_BEHIND, refused.errorCode(), refused.getMessage());
            assertTrue(refused.getMessage().contains("frontend 1 dropped a SYNC mirror"), refused.getMessage());

            fe1.call(ReplicationLayout.posting(1, PostingEpoch.pack(3, 1), 0)).await(); // added back
            awaitState(m, ReplicationLayout.STATE_IN_SYNC);
            fe1.call(ReplicationLayout.posting(1, PostingEpoch.pack(3, 2), 0)).await(); // kept: re-declared first
            attached[1] = PostingEpoch.pack(3, 2);
            peer.call(ReplicationLayout.frontends(attached)).await();
            assertEquals(ReplicationLayout.STATE_IN_SYNC, m.replication().state(), "a kept mirror was voided");
            attached[1] = 4; // a reconnect: new attach epoch, generation 0
            peer.call(ReplicationLayout.frontends(attached)).await();
            assertEquals(ReplicationLayout.STATE_IN_SYNC, m.replication().state(), "a reconnect voided");
        }
    }

    /**
     * {@code peer} attaches to {@code m} as its backend and ends an empty copy, reporting frontend 1 attached under
     * epoch 3, which declares the mirror over {@code fe1}: the mirror turns in sync. Returns the attached epochs as
     * reported (the caller changes them for its next report).
     */
    private static long[] inSyncWithFrontendOneDeclared(BackendNode m, FabricConnection peer, FabricConnection fe1) {
        int slabs = (int) m.superblock().slabCount();
        peerAttach(peer, m.superblock());
        long[] attached = {0, 3};
        peer.call(ReplicationLayout.frontends(attached)).await();
        peer.call(ReplicationLayout.Replicate.copyDone(new long[FRONTENDS][4], new long[slabs]).encode()).await();
        fe1.call(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, 1, 0)).await();
        fe1.call(ReplicationLayout.posting(1, 3, 0)).await();
        awaitState(m, ReplicationLayout.STATE_IN_SYNC);
        return attached;
    }

    /**
     * The cluster's path to the same: a mirror dropped from the configuration keeps its declarations through a new
     * peer's copy (the frontend kept posting to a mirror whose shipper merely reconnected). A frontend that dropped it
     * meanwhile raised its posting generation, which the new copy reports before COPY_DONE: the declaration from
     * before the drop does not make the mirror in sync again; the frontend's new one does.
     */
    @Test
    void aDeclarationFromBeforeTheDropDoesNotCountAfterANewCopy() {
        try (BackendNode m = mirror(); FabricConnection peer = m.localFabric().connect();
             FabricConnection fe1 = m.localFabric().connect()) {
            long[] attached = inSyncWithFrontendOneDeclared(m, peer, fe1);

            try (FabricConnection again = m.localFabric().connect()) { // the backend's new shipper
                peerAttach(again, m.superblock());
                assertEquals(ReplicationLayout.STATE_CATCHING_UP, m.replication().state(), "paused for the copy");
                attached[1] = PostingEpoch.pack(3, 1);
                again.call(ReplicationLayout.frontends(attached)).await();
                long[] slabs = new long[(int) m.superblock().slabCount()];
                again.call(ReplicationLayout.Replicate.copyDone(new long[FRONTENDS][4], slabs).encode()).await();
                assertEquals(ReplicationLayout.STATE_CATCHING_UP, m.replication().state(),
                        "in sync on a declaration from before the drop");
                AsymNvmException refused = assertThrows(AsymNvmException.class, m::promote);
                assertTrue(refused.getMessage().contains("frontend 1 dropped a SYNC mirror"), refused.getMessage());
                fe1.call(ReplicationLayout.posting(1, PostingEpoch.pack(3, 1), 0)).await();
                awaitState(m, ReplicationLayout.STATE_IN_SYNC);
            }
        }
    }

    @Test
    void frontendOnAMirrorWritesItsSemanticRingAndFlushesItsWatermarkOnly() {
        try (BackendNode m = mirror(); FabricConnection c = m.localFabric().connect()) {
            AttachReply reply = AttachReply.decode(c.call(ControlMessageLayout.request(
                    ControlMessageLayout.KIND_ATTACH, 0, 0)).await().bytes());
            assertTrue(reply.isMirror());
            assertEquals(m.superblock().identity(), reply.identity());
            byte[] record = SemanticRecordLayout.encode(0, 1, 42, new byte[10], 10);
            c.write(RegionIds.semantic(0), 0, record, 0, record.length).await();
            long end = LogRecordLayout.alignedLength(record.length);
            c.flush(end, true).await();
            byte[] block = c.read(RegionIds.control(0), 0, ControlBlockLayout.READ_LENGTH).await().bytes();
            assertEquals(end, ControlBlockLayout.durableSemTail(block), "the mirror's durable watermark");
            AsymNvmException past = assertThrows(AsymNvmException.class, () -> c.flush(end + 64, true).await());
            assertEquals(ErrorCode.BAD_REQUEST, past.errorCode(), "a stamp past the valid records: " + past);
            for (int region : new int[] {RegionIds.redo(0), RegionIds.HEAP}) {
                AsymNvmException denied = assertThrows(AsymNvmException.class,
                        () -> c.write(region, 0, new byte[8], 0, 8).await());
                assertEquals(ErrorCode.ACCESS_DENIED, denied.errorCode(), denied.getMessage());
            }
            AsymNvmException notPrimary = assertThrows(AsymNvmException.class, () -> c.call(
                    ControlMessageLayout.request(ControlMessageLayout.KIND_RETURN_SLAB, 0, 3)).await());
            assertEquals(ErrorCode.NOT_PRIMARY, notPrimary.errorCode());
        }
    }

    @Test
    void promotionClosesEveryConnectionAndServesAsBackendUnderTheNextEpoch() {
        try (BackendNode m = mirror(); FabricConnection peer = m.localFabric().connect();
             FabricConnection frontend = m.localFabric().connect()) {
            int slabs = (int) m.superblock().slabCount();
            long epoch = m.replication().epoch();
            peerAttach(peer, m.superblock());
            peer.call(ReplicationLayout.frontends(new long[FRONTENDS])).await(); // none attached to the backend
            peer.call(ReplicationLayout.Replicate.copyDone(new long[FRONTENDS][4],
                    new long[slabs]).encode()).await();
            awaitState(m, ReplicationLayout.STATE_IN_SYNC);
            frontend.call(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, 1, 0)).await();

            assertEquals(epoch + 1, m.promote());
            for (FabricConnection closed : new FabricConnection[] {peer, frontend}) {
                AsymNvmException lost = assertThrows(AsymNvmException.class, () -> closed.call(
                        ControlMessageLayout.request(ControlMessageLayout.KIND_PING, 0, 0)).await());
                assertEquals(ErrorCode.CONNECTION_LOST, lost.errorCode(), lost.getMessage());
            }
            try (FabricConnection again = m.localFabric().connect()) {
                AttachReply reply = AttachReply.decode(again.call(ControlMessageLayout.request(
                        ControlMessageLayout.KIND_ATTACH, 1, 0)).await().bytes());
                assertFalse(reply.isMirror(), "role after promotion");
                assertEquals(epoch + 1, reply.backendEpoch());
                byte[] grant = again.call(ControlMessageLayout.request(ControlMessageLayout.KIND_GRANT_SLAB, 1, 0))
                        .await().bytes();
                assertEquals(16, grant.length, "a slab grant on the promoted node");
            }
            assertEquals(epoch + 1, SuperblockLayout.effectiveEpoch(
                    new io.asymnvm.core.region.ByteArrayRegion("sb", readFirstPage(m)), m.superblock()));
        }
    }

    /**
     * The persisted replication state across restarts: in sync survives a restart, a peer attach withdraws it
     * before its copy (a restart then catches up and refuses promotion), and a mark of an older epoch vouches for
     * nothing.
     */
    /**
     * A frontend that died mid-WRITE can leave a torn semantic record followed by a whole one on a mirror. Its next
     * incarnation writes from the torn one on; a record of its own that ends where the stale one begins must not
     * make the stale one part of the ring (a promotion would re-execute it): attach invalidates it.
     */
    @Test
    void aStaleSemanticRecordPastTheTailIsInvalidatedWhenAFrontendAttaches() {
        try (BackendNode m = mirror(); FabricConnection first = m.localFabric().connect();
             FabricConnection second = m.localFabric().connect()) {
            attachTo(first);
            byte[] one = SemanticRecordLayout.encode(0, 1, 42, new byte[10], 10);
            byte[] torn = one.clone();
            torn[one.length / 2] ^= 0x40;
            byte[] stale = SemanticRecordLayout.encode(one.length, 2, 42, new byte[10], 10);
            first.write(RegionIds.semantic(0), 0, torn, 0, torn.length).await();
            first.write(RegionIds.semantic(0), one.length, stale, 0, stale.length).await();

            assertEquals(0, attachTo(second).semValidTail(), "the next incarnation resumes at the torn record");
            byte[] mine = SemanticRecordLayout.encode(0, 1, 43, new byte[10], 10);
            assertEquals(one.length, mine.length);
            second.write(RegionIds.semantic(0), 0, mine, 0, mine.length).await();
            try (FabricConnection third = m.localFabric().connect()) {
                AttachReply r = attachTo(third);
                assertEquals(LogRecordLayout.alignedLength(mine.length), r.semValidTail(),
                        "the first incarnation's tx 2 taken for the second's");
                assertEquals(1, r.lastSemTxId());
            }
        }
    }

    /**
     * A frontend added this mirror at run time from ring position P (MIRROR_POSTING with a semantic start: its
     * records before P were applied on the backend and reach the mirror as redo, never in its ring), and the add was
     * undone before its FLUSH, while the mirror's replay had not reached P (here: no copy yet). Adding it again right
     * away attaches again: the records the mirror never held before P are no damage. Before, that attach scanned the
     * ring from the checkpoint's head (0) to the watermark P, refused with RING_CORRUPT and quarantined the frontend
     * for good (MirrorLateJoinTest's re-add, once in 5 loaded runs); a restart in that window did the same. A damaged
     * record between P and the watermark still quarantines.
     */
    @Test
    void aSemanticStartAheadOfTheMirrorsReplayIsNoDamageForTheNextAttach() {
        BackendConfiguration cfg = config("mirror.pm");
        long start = 40 * LogRecordLayout.ALIGNMENT; // records before it were applied on the backend, not here
        byte[] first = SemanticRecordLayout.encode(start, 11, 42, new byte[10], 10);
        long second = start + first.length;
        byte[] next = SemanticRecordLayout.encode(second, 12, 42, new byte[10], 10);
        long end = second + next.length;
        Superblock sb;
        try (BackendNode m = mirror()) {
            sb = m.superblock();
            try (FabricConnection undone = m.localFabric().connect()) { // the add that is undone after the re-post
                assertEquals(0, attachTo(undone).semHead(), "the mirror's replay is at the ring's start");
                undone.call(ReplicationLayout.posting(0, 1, ReplicationLayout.NO_DECLARATION, start)).await();
                undone.write(RegionIds.semantic(0), start, first, 0, first.length).await(); // its FLUSH failed
            }
            try (FabricConnection again = m.localFabric().connect()) { // the same mirror added again right away
                AttachReply r = attachTo(again);
                assertEquals(second, r.semValidTail(), "the re-posted record is there, nothing else is expected");
                assertEquals(null, m.frontendLog(0).quarantine());
                again.call(ReplicationLayout.posting(0, 2, ReplicationLayout.NO_DECLARATION, start)).await();
                again.write(RegionIds.semantic(0), second, next, 0, next.length).await();
                again.flush(end, true).await();
            }
        }
        try (BackendNode m = BackendNode.startMirror(cfg, null); FabricConnection c = m.localFabric().connect()) {
            assertEquals(null, m.frontendLog(0).quarantine(), "a restart scans from the same start");
            assertEquals(end, attachTo(c).semValidTail());
        }
        io.asymnvm.backend.InspectReport report = io.asymnvm.backend.InspectTool.inspect(cfg.pmFile());
        assertTrue(report.ok(), "inspect: " + report.problems());
        assertEquals(2, report.frontends().get(0).semantic().records(), "inspect scans from the start too");
        try (io.asymnvm.core.region.MappedRegion r = io.asymnvm.core.region.MappedRegion.open(cfg.pmFile(),
                io.asymnvm.core.region.MappedRegion.MapMode.FILE)) {
            long at = sb.semRingOf(0) + second + SemanticRecordLayout.HEADER_LENGTH; // an argument byte
            r.write(at, new byte[] {0x5a}, 0, 1);
            r.persist(at, 1);
        }
        try (BackendNode m = BackendNode.startMirror(cfg, null); FabricConnection c = m.localFabric().connect()) {
            assertTrue(m.frontendLog(0).quarantine() != null, "a damaged record before the watermark");
            AsymNvmException damaged = assertThrows(AsymNvmException.class, () -> attachTo(c));
            assertEquals(ErrorCode.RING_CORRUPT, damaged.errorCode(), damaged.getMessage());
        }
    }

    private static AttachReply attachTo(FabricConnection c) {
        return AttachReply.decode(c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, 0, 0))
                .await().bytes());
    }

    @Test
    void restartKeepsInSyncUntilANewCopyStartsOrTheEpochMoves() {
        BackendConfiguration cfg = config("mirror.pm");
        Superblock sb;
        try (BackendNode m = mirror(); FabricConnection peer = m.localFabric().connect()) {
            sb = m.superblock();
            peerAttach(peer, sb);
            peer.call(ReplicationLayout.frontends(new long[FRONTENDS])).await(); // none attached to the backend
            peer.call(ReplicationLayout.Replicate.copyDone(new long[FRONTENDS][4],
                    new long[(int) sb.slabCount()]).encode()).await();
            awaitState(m, ReplicationLayout.STATE_IN_SYNC);
        }
        try (BackendNode m = BackendNode.startMirror(cfg, null); FabricConnection peer = m.localFabric().connect()) {
            assertEquals(ReplicationLayout.STATE_IN_SYNC, m.replication().state(), "restarted with an in-sync mark");
            ReplicationLayout.PeerReply reply = ReplicationLayout.PeerReply.decode(peerAttach(peer, sb));
            assertEquals(ReplicationLayout.STATE_CATCHING_UP, reply.state(), "a new copy starts");
        } // closed while the new copy has not completed
        try (BackendNode m = BackendNode.startMirror(cfg, null)) {
            assertEquals(ReplicationLayout.STATE_CATCHING_UP, m.replication().state(),
                    "the mark was withdrawn before the new copy");
            AsymNvmException e = assertThrows(AsymNvmException.class, m::promote);
            assertEquals(ErrorCode.REPLICA_BEHIND, e.errorCode(), e.getMessage());
            assertTrue(m.replication().isMirror());
        }
        try (BackendNode m = BackendNode.startMirror(cfg, null); FabricConnection peer = m.localFabric().connect()) {
            peerAttach(peer, sb);
            peer.call(ReplicationLayout.frontends(new long[FRONTENDS])).await(); // none attached to the backend
            peer.call(ReplicationLayout.Replicate.copyDone(new long[FRONTENDS][4],
                    new long[(int) sb.slabCount()]).encode()).await();
            awaitState(m, ReplicationLayout.STATE_IN_SYNC);
        }
        try (io.asymnvm.core.region.MappedRegion r = io.asymnvm.core.region.MappedRegion.open(cfg.pmFile(),
                io.asymnvm.core.region.MappedRegion.MapMode.FILE)) {
            assertTrue(io.asymnvm.core.layout.MirrorStateLayout.read(r).inSync());
            SuperblockLayout.writePromotedEpoch(r, sb.epoch() + 1); // as a node following a newer backend does
        }
        try (BackendNode m = BackendNode.startMirror(cfg, null)) {
            assertEquals(ReplicationLayout.STATE_CATCHING_UP, m.replication().state(),
                    "an in-sync mark of epoch " + sb.epoch() + " on a node of epoch " + (sb.epoch() + 1));
        }
    }

    private static byte[] readFirstPage(BackendNode m) {
        try (var ch = java.nio.channels.FileChannel.open(m.configuration().pmFile())) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4096);
            ch.read(b, 0);
            return b.array();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
