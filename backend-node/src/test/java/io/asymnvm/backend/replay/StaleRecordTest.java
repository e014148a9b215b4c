package io.asymnvm.backend.replay;

import io.asymnvm.backend.BackendFixture;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.image.PersistCountingRegion;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.core.region.MappedRegion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.asymnvm.backend.BackendFixture.attach;
import static io.asymnvm.backend.BackendFixture.batch;
import static io.asymnvm.backend.BackendFixture.bytes;
import static io.asymnvm.backend.BackendFixture.checkpoint;
import static io.asymnvm.backend.BackendFixture.grantSlab;
import static io.asymnvm.backend.BackendFixture.heap;
import static io.asymnvm.backend.BackendFixture.writeRedo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A crash can leave a torn record followed by whole ones of the same ring lap (the media kept a later line and
 * lost an earlier one). The next session resumes writing at the torn record; where one of its records ends
 * exactly where a stale whole one begins, the stale one validated (CRC, type and position all match) before the
 * session wrote over it. The replayer then applied a crashed session's redo ahead of the frontend (found by
 * PowerFailureTest with -Dasymnvm.powerFailure.redoBatchTransactions=2 as CACHE_INCOHERENT: the backend applied
 * a transaction the recovering frontend had not executed yet), and a later recovery re-executed a crashed
 * session's semantic record that the recovery before had already judged lost. Attach now invalidates such
 * records ({@code FrontendLog#invalidateStaleRecords}).
 */
@Timeout(60)
class StaleRecordTest {
    private static final int ARGS = 40;

    @TempDir
    Path dir;

    private BackendNode node;
    private final List<FabricConnection> connections = new ArrayList<>();

    private Path pm() {
        return dir.resolve("stale.pm");
    }

    private void stopNode() {
        connections.forEach(FabricConnection::close);
        connections.clear();
        node.close();
        node = null;
    }

    @AfterEach
    void tearDown() {
        if (node != null) {
            stopNode();
        }
    }

    private FabricConnection connection() {
        FabricConnection c = node.localFabric().connect();
        connections.add(c);
        return c;
    }

    /** Starts the node as after a power failure (the mark file says it was running). */
    private void startAfterCrash() throws IOException {
        Files.writeString(BackendFixture.markFile(pm()), "running pid 1\n");
        node = BackendFixture.start(pm());
    }

    private static byte[] torn(byte[] record) {
        byte[] t = record.clone();
        t[t.length / 2] ^= 0x40;
        return t;
    }

    @Test
    void aStaleRedoBatchPastATornTailIsNotAppliedWhenTheNewSessionsBatchEndsWhereItBegins() throws IOException {
        node = BackendFixture.start(pm());
        FabricConnection c = connection();
        attach(c, 0);
        long at = grantSlab(c)[1] + 1024;
        Superblock sb = node.superblock();
        stopNode();

        // the crashed session: tx 1 at position 0, torn; its tx 2 right after it, whole
        byte[] one = batch().write(at, bytes(64, 1)).commit(1).seal(0, 64);
        byte[] stale = batch().write(at + 64, bytes(64, 2)).commit(2).seal(one.length, 128);
        BackendFixture.patchFile(pm(), sb.redoRingOf(0), torn(one));
        BackendFixture.patchFile(pm(), sb.redoRingOf(0) + one.length, stale);
        startAfterCrash();

        FabricConnection after = connection();
        AttachReply r = attach(after, 0);
        assertEquals(0, r.appliedTxId());
        assertEquals(0, r.redoValidTail(), "the new session resumes at the torn batch");
        // the new session's tx 1, as long as the crashed one's: it ends exactly where the stale batch begins
        byte[] again = batch().write(at, bytes(64, 3)).commit(1).seal(0, 64);
        assertEquals(one.length, again.length);
        writeRedo(after, 0, 0, again);
        node.awaitReplayed();

        assertEquals(1, checkpoint(after, 0).appliedTxId(),
                "the crashed session's tx 2 was applied before the new session wrote its own tx 2");
        assertArrayEquals(bytes(64, 3), heap(after, at, 64));
        assertArrayEquals(new byte[64], heap(after, at + 64, 64), "no byte of the stale batch reached the heap");

        // the new session's own tx 2, at the same position, is applied as usual
        byte[] two = batch().write(at + 64, bytes(64, 4)).commit(2).seal(one.length, 128);
        writeRedo(after, 0, one.length, two);
        node.awaitReplayed();
        assertEquals(2, checkpoint(after, 0).appliedTxId());
        assertArrayEquals(bytes(64, 4), heap(after, at + 64, 64));
    }

    @Test
    void aStaleSemanticRecordPastATornTailIsNotTakenForTheNextSessionsRecord() throws IOException {
        node = BackendFixture.start(pm());
        FabricConnection c = connection();
        attach(c, 0);
        Superblock sb = node.superblock();
        stopNode();

        // the crashed session: tx 1's record torn, tx 2's whole right after it
        byte[] one = SemanticRecordLayout.encode(0, 1, 0xFEED, bytes(ARGS, 1), ARGS);
        byte[] stale = SemanticRecordLayout.encode(one.length, 2, 0xFEED, bytes(ARGS, 2), ARGS);
        BackendFixture.patchFile(pm(), sb.semRingOf(0), torn(one));
        BackendFixture.patchFile(pm(), sb.semRingOf(0) + one.length, stale);
        startAfterCrash();

        FabricConnection second = connection();
        AttachReply r = attach(second, 0);
        assertEquals(0, r.semValidTail(), "nothing valid: tx 1's record is torn");
        // the recovering session (it judged tx 1 and tx 2 lost) writes its own tx 1 there and dies unflushed
        byte[] mine = SemanticRecordLayout.encode(0, 1, 0xBEEF, bytes(ARGS, 3), ARGS);
        assertEquals(one.length, mine.length);
        second.write(RegionIds.semantic(0), 0, mine, 0, mine.length).await();

        AttachReply third = attach(connection(), 0);
        assertEquals(mine.length, third.semValidTail(),
                "the crashed session's tx 2 would be re-executed by the next recovery");
        assertEquals(1, third.lastSemTxId());
    }

    @Test
    void theStaleRecordsPastATornTailAreWrittenBackInOneCall() throws IOException {
        node = BackendFixture.start(pm());
        attach(connection(), 0);
        Superblock sb = node.superblock();
        stopNode();

        // the crashed session: tx 1's record torn, then three whole records of the same lap
        byte[] one = SemanticRecordLayout.encode(0, 1, 0xFEED, bytes(ARGS, 1), ARGS);
        BackendFixture.patchFile(pm(), sb.semRingOf(0), torn(one));
        long position = one.length;
        for (int tx = 2; tx <= 4; tx++) {
            byte[] stale = SemanticRecordLayout.encode(position, tx, 0xFEED, bytes(ARGS, tx), ARGS);
            BackendFixture.patchFile(pm(), sb.semRingOf(0) + position, stale);
            position += stale.length;
        }
        Files.writeString(BackendFixture.markFile(pm()), "running pid 1\n");
        PersistCountingRegion region = new PersistCountingRegion(MappedRegion.open(pm(), MappedRegion.MapMode.FILE));
        node = BackendNode.start(BackendFixture.config(pm()).conclude(), region);

        long before = region.syncs();
        assertEquals(3, node.frontendLog(0).invalidateStaleRecords(0, 0));
        assertEquals(1, region.syncs() - before, "one write-back for the lap's stale records, not one per record");
        assertEquals(0, attach(connection(), 0).semValidTail(), "none of them validates any more");
    }

    @Test
    void aCleanRingIsNotWrittenAtAttach() {
        node = BackendFixture.start(pm());
        FabricConnection c = connection();
        attach(c, 0);
        long at = grantSlab(c)[1] + 1024;
        long position = 0;
        // more than a lap: the slots past the tail hold the previous lap's records
        for (long tx = 1; position < 3 * BackendFixture.RING / 2; tx++) {
            byte[] b = batch().write(at, bytes(928, (int) tx)).commit(tx).seal(position, 0); // 1 KiB: no padding
            writeRedo(c, 0, position % BackendFixture.RING, b);
            position += b.length;
            node.awaitReplayed();
        }
        assertEquals(0, node.frontendLog(0).invalidateStaleRecords(node.frontendLog(0).checkpoint().semHead(),
                position), "a slot of the previous lap is not stale for this one");
    }
}
