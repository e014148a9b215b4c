package io.asymnvm.core.layout;

import io.asymnvm.core.layout.ControlBlockLayout.Checkpoint;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

@Timeout(60)
class ControlBlockLayoutTest {

    private static byte[] block(Checkpoint slot0, Checkpoint slot1) {
        byte[] b = new byte[ControlBlockLayout.READ_LENGTH];
        if (slot0 != null) {
            System.arraycopy(ControlBlockLayout.encodeSlot(slot0), 0, b, ControlBlockLayout.SLOT0_OFFSET,
                    ControlBlockLayout.SLOT_LENGTH);
        }
        if (slot1 != null) {
            System.arraycopy(ControlBlockLayout.encodeSlot(slot1), 0, b, ControlBlockLayout.SLOT1_OFFSET,
                    ControlBlockLayout.SLOT_LENGTH);
        }
        return b;
    }

    @Test
    void slotRoundTrip() {
        Checkpoint cp = new Checkpoint(3, 100, 4096, 8192);
        byte[] slot = ControlBlockLayout.encodeSlot(cp);
        assertEquals(ControlBlockLayout.SLOT_LENGTH, slot.length);
        ByteBuffer b = ByteBuffer.wrap(slot).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(3, b.getLong(ControlBlockLayout.SLOT_SEQ_OFFSET));
        assertEquals(100, b.getLong(ControlBlockLayout.SLOT_APPLIED_OFFSET));
        assertEquals(4096, b.getLong(ControlBlockLayout.SLOT_REDO_HEAD_OFFSET));
        assertEquals(8192, b.getLong(ControlBlockLayout.SLOT_SEM_HEAD_OFFSET));
        assertEquals(cp, ControlBlockLayout.decodeSlot(slot, 0));
        assertEquals(cp, ControlBlockLayout.decodeSlot(block(null, cp), ControlBlockLayout.SLOT1_OFFSET));
    }

    @Test
    void emptyBlockYieldsInitialCheckpoint() {
        assertSame(Checkpoint.INITIAL, ControlBlockLayout.newestCheckpoint(new byte[ControlBlockLayout.READ_LENGTH]));
    }

    @Test
    void newestValidSlotWins() {
        Checkpoint older = new Checkpoint(4, 40, 400, 4000);
        Checkpoint newer = new Checkpoint(5, 50, 500, 5000);
        assertEquals(newer, ControlBlockLayout.newestCheckpoint(block(older, newer)));
        assertEquals(newer, ControlBlockLayout.newestCheckpoint(block(newer, older)));
        assertEquals(older, ControlBlockLayout.newestCheckpoint(block(older, null)));
        assertEquals(newer, ControlBlockLayout.newestCheckpoint(block(null, newer)));
    }

    @Test
    void tornSlotIsIgnoredAndTheOtherReturned() {
        Checkpoint older = new Checkpoint(6, 60, 600, 6000);
        Checkpoint newer = new Checkpoint(7, 70, 700, 7000);
        // every byte of the torn (newer) slot that the CRC covers, in either slot position
        for (int i = 0; i < ControlBlockLayout.SLOT_CRC_OFFSET + 4; i++) {
            byte[] b = block(older, newer);
            b[ControlBlockLayout.SLOT1_OFFSET + i] ^= 0x10;
            assertEquals(older, ControlBlockLayout.newestCheckpoint(b), "slot 1 torn at byte " + i);

            byte[] c = block(newer, older);
            c[ControlBlockLayout.SLOT0_OFFSET + i] ^= 0x10;
            assertEquals(older, ControlBlockLayout.newestCheckpoint(c), "slot 0 torn at byte " + i);
        }
    }

    @Test
    void bothSlotsTornYieldsInitial() {
        byte[] b = block(new Checkpoint(1, 1, 1, 1), new Checkpoint(2, 2, 2, 2));
        b[ControlBlockLayout.SLOT0_OFFSET + ControlBlockLayout.SLOT_APPLIED_OFFSET] ^= 1;
        b[ControlBlockLayout.SLOT1_OFFSET + ControlBlockLayout.SLOT_CRC_OFFSET] ^= 1;
        assertSame(Checkpoint.INITIAL, ControlBlockLayout.newestCheckpoint(b));
    }

    @Test
    void slotWithSequenceZeroIsNotACheckpoint() {
        byte[] b = block(new Checkpoint(0, 99, 99, 99), null);
        assertNull(ControlBlockLayout.decodeSlot(b, ControlBlockLayout.SLOT0_OFFSET));
        assertSame(Checkpoint.INITIAL, ControlBlockLayout.newestCheckpoint(b));
    }

    @Test
    void nextSlotAlternatesAndNeverOverwritesTheNewest() {
        assertEquals(ControlBlockLayout.SLOT1_OFFSET, ControlBlockLayout.nextSlotOffset(Checkpoint.INITIAL));
        // simulate a replayer writing successive checkpoints into a block
        byte[] b = new byte[ControlBlockLayout.READ_LENGTH];
        Checkpoint current = ControlBlockLayout.newestCheckpoint(b);
        int lastSlot = -1;
        for (long seq = 1; seq <= 6; seq++) {
            int slot = ControlBlockLayout.nextSlotOffset(current);
            assertEquals(seq % 2 == 0 ? ControlBlockLayout.SLOT0_OFFSET : ControlBlockLayout.SLOT1_OFFSET, slot);
            assertNotEquals(lastSlot, slot, "must not overwrite the newest valid slot");
            Checkpoint next = new Checkpoint(seq, seq * 10, seq * 100, seq * 1000);
            System.arraycopy(ControlBlockLayout.encodeSlot(next), 0, b, slot, ControlBlockLayout.SLOT_LENGTH);
            current = ControlBlockLayout.newestCheckpoint(b);
            assertEquals(next, current);
            lastSlot = slot;
        }
    }

    @Test
    void watermarkWordsDecode() {
        byte[] block = new byte[ControlBlockLayout.READ_LENGTH];
        ByteBuffer b = ByteBuffer.wrap(block).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(ControlBlockLayout.DURABLE_SEM_TAIL_OFFSET, 123456789L);
        b.putLong(ControlBlockLayout.ATTACH_EPOCH_OFFSET, 17);
        b.putLong(ControlBlockLayout.STATE_OFFSET, ControlBlockLayout.STATE_DETACHED);
        assertEquals(123456789L, ControlBlockLayout.durableSemTail(block));
        assertEquals(17, ControlBlockLayout.attachEpoch(block));
        assertEquals(ControlBlockLayout.STATE_DETACHED, ControlBlockLayout.state(block));
        // and they do not disturb checkpoint decoding
        assertSame(Checkpoint.INITIAL, ControlBlockLayout.newestCheckpoint(block));
    }
}
