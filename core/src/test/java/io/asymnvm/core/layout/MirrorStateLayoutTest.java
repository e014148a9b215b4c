package io.asymnvm.core.layout;

import io.asymnvm.core.layout.MirrorStateLayout.Mark;
import io.asymnvm.core.region.ByteArrayRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class MirrorStateLayoutTest {

    private static ByteArrayRegion region() {
        return new ByteArrayRegion("pm", 4096);
    }

    @Test
    void blankImageHasNoMark() {
        Mark m = MirrorStateLayout.read(region());
        assertEquals(Mark.NONE, m);
        assertFalse(m.inSync());
    }

    @Test
    void newestValidSlotWinsAndSlotsAlternate() {
        ByteArrayRegion r = region();
        Mark first = MirrorStateLayout.write(r, 1, ReplicationLayout.STATE_IN_SYNC);
        assertEquals(new Mark(1, 1, ReplicationLayout.STATE_IN_SYNC), MirrorStateLayout.read(r));
        byte[] slot1Before = r.read(MirrorStateLayout.SLOT1_OFFSET, MirrorStateLayout.SLOT_LENGTH);
        Mark second = MirrorStateLayout.write(r, 2, ReplicationLayout.STATE_CATCHING_UP);
        assertEquals(first.seq() + 1, second.seq());
        assertEquals(second, MirrorStateLayout.read(r));
        assertFalse(MirrorStateLayout.read(r).inSync());
        // the second write went to the other slot: the first is still intact
        assertArrayEquals(slot1Before, r.read(MirrorStateLayout.SLOT1_OFFSET, MirrorStateLayout.SLOT_LENGTH));
        assertEquals(first, MirrorStateLayout.decodeSlot(slot1Before));
        assertEquals(second, MirrorStateLayout.decodeSlot(r.read(MirrorStateLayout.SLOT0_OFFSET,
                MirrorStateLayout.SLOT_LENGTH)));
    }

    @Test
    void tornUpdateLeavesThePreviousMark() {
        ByteArrayRegion r = region();
        Mark inSync = MirrorStateLayout.write(r, 3, ReplicationLayout.STATE_IN_SYNC);
        Mark cleared = MirrorStateLayout.write(r, 3, ReplicationLayout.STATE_CATCHING_UP);
        int clearedAt = (cleared.seq() & 1) == 0 ? MirrorStateLayout.SLOT0_OFFSET : MirrorStateLayout.SLOT1_OFFSET;
        // a crash kept the new sequence word but not the rest of the slot (8-byte stores are atomic, no more)
        r.putLong(clearedAt + MirrorStateLayout.STATE_OFFSET, ReplicationLayout.STATE_IN_SYNC);
        assertEquals(inSync, MirrorStateLayout.read(r), "a torn slot fails its CRC; the previous mark stands");
        assertTrue(MirrorStateLayout.read(r).inSync());
    }

    @Test
    void slotsLieInTheSuperblockPageOutsideItsCrcAndThePromotedEpoch() {
        assertTrue(MirrorStateLayout.SLOT0_OFFSET >= SuperblockLayout.PROMOTED_EPOCH_OFFSET + 8);
        assertTrue(MirrorStateLayout.SLOT0_OFFSET >= SuperblockLayout.LENGTH);
        assertTrue(MirrorStateLayout.END_OFFSET <= 512, "the smallest page size holds both slots");
        assertNotEquals(MirrorStateLayout.SLOT0_OFFSET / 64, MirrorStateLayout.SLOT1_OFFSET / 64,
                "the slots share a cache line");
    }

    @Test
    void confirmedLimitIsOneWordOfTheControlBlock() {
        ByteArrayRegion r = region();
        MirrorStateLayout.writeConfirmedLimit(r, 1024, 777);
        assertEquals(777, MirrorStateLayout.confirmedLimit(r, 1024));
        assertEquals(777, r.getLong(1024 + ControlBlockLayout.MIRROR_LIMIT_OFFSET));
        assertTrue(ControlBlockLayout.MIRROR_LIMIT_OFFSET >= ControlBlockLayout.PUBLISHED_SEQ_OFFSET + 8
                && ControlBlockLayout.MIRROR_LIMIT_OFFSET + 8 <= ControlBlockLayout.READ_LENGTH);
    }

    @Test
    void rejectsAStateThatIsNeitherInSyncNorCatchingUp() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MirrorStateLayout.write(region(), 1, ReplicationLayout.STATE_SERVING));
        assertTrue(e.getMessage().contains(String.valueOf(ReplicationLayout.STATE_SERVING)), e.getMessage());
    }
}
