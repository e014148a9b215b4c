package io.asymnvm.core.layout;

import io.asymnvm.core.region.PersistentRegion;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * A mirror's persisted replication state (issue 9): whether it is in sync with the backend of which epoch, and per
 * frontend the redo position up to which shipped redo was confirmed, so that a mirror that lost power (or
 * restarted) replays what it was sent and comes back in sync, promotable, instead of catching up from a copy.
 *
 * <p>The mark is a double-buffered record in the superblock's page, after the promoted-epoch word and outside the
 * superblock's CRC: the writer fills the slot not holding the newest valid record, then persists it; the valid
 * slot with the larger sequence wins, and a slot torn by a crash fails its CRC32C and is ignored, so a torn update
 * leaves the previous mark. The two slots lie in different cache lines. A blank slot (sequence 0) is not valid:
 * images formatted before this record existed read as "no mark" (catching up).
 *
 * <pre>
 * superblock page (page 0, at least 512 bytes):
 *   0 superblock (132 bytes, CRC'd)      256 promoted epoch (8)
 * 320 slot 0: seq(8) epoch(8) state(8) crc32c(4) pad(4)
 * 384 slot 1: same
 * each frontend's control block: ControlBlockLayout#MIRROR_LIMIT_OFFSET confirmedRedoLimit(8), one atomic store
 * </pre>
 *
 * {@code state} is {@link ReplicationLayout#STATE_IN_SYNC} or {@link ReplicationLayout#STATE_CATCHING_UP};
 * {@code epoch} is the node's epoch when the mark was written (a mark of another epoch vouches for nothing: the
 * node followed a newer backend or was promoted since). The confirmed limit of a frontend is only meaningful while
 * the mark is in sync; it is zeroed when a new image copy starts. Little-endian.
 */
public final class MirrorStateLayout {
    public static final int SLOT0_OFFSET = 320;
    public static final int SLOT1_OFFSET = 384;
    public static final int SLOT_LENGTH = 32;
    public static final int SEQ_OFFSET = 0;
    public static final int EPOCH_OFFSET = 8;
    public static final int STATE_OFFSET = 16;
    public static final int CRC_OFFSET = 24;
    /** The superblock page must hold both slots: the smallest page size is 512. */
    public static final int END_OFFSET = SLOT1_OFFSET + SLOT_LENGTH;

    private MirrorStateLayout() {
    }

    /** A decoded mark. */
    public record Mark(long seq, long epoch, int state) {
        /** No valid slot: nothing is vouched for. */
        public static final Mark NONE = new Mark(0, 0, ReplicationLayout.STATE_CATCHING_UP);

        public boolean inSync() {
            return state == ReplicationLayout.STATE_IN_SYNC;
        }
    }

    static byte[] encodeSlot(Mark m) {
        ByteBuffer b = ByteBuffer.allocate(SLOT_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(SEQ_OFFSET, m.seq());
        b.putLong(EPOCH_OFFSET, m.epoch());
        b.putLong(STATE_OFFSET, m.state());
        b.putInt(CRC_OFFSET, crc(b.array()));
        return b.array();
    }

    private static int crc(byte[] slot) {
        CRC32C c = new CRC32C();
        c.update(slot, 0, CRC_OFFSET);
        return (int) c.getValue();
    }

    /** The slot's mark, or null if blank or torn. */
    static Mark decodeSlot(byte[] slot) {
        ByteBuffer b = ByteBuffer.wrap(slot).order(ByteOrder.LITTLE_ENDIAN);
        long seq = b.getLong(SEQ_OFFSET);
        long state = b.getLong(STATE_OFFSET);
        if (seq == 0 || b.getInt(CRC_OFFSET) != crc(slot)) {
            return null;
        }
        if (state != ReplicationLayout.STATE_IN_SYNC && state != ReplicationLayout.STATE_CATCHING_UP) {
            return null; // a CRC-valid slot with a state this build does not know vouches for nothing
        }
        return new Mark(seq, b.getLong(EPOCH_OFFSET), (int) state);
    }

    /** The newest valid mark of the image, {@link Mark#NONE} if there is none. */
    public static Mark read(PersistentRegion region) {
        Mark a = decodeSlot(region.read(SLOT0_OFFSET, SLOT_LENGTH));
        Mark b = decodeSlot(region.read(SLOT1_OFFSET, SLOT_LENGTH));
        if (a == null) {
            return b == null ? Mark.NONE : b;
        }
        return b == null || a.seq() >= b.seq() ? a : b;
    }

    /**
     * Writes {@code state} under {@code epoch} into the slot not holding the newest mark and persists it; returns
     * the mark now newest. A crash before the persist completes leaves the previous mark (or a torn slot, ignored).
     */
    public static Mark write(PersistentRegion region, long epoch, int state) {
        if (state != ReplicationLayout.STATE_IN_SYNC && state != ReplicationLayout.STATE_CATCHING_UP) {
            throw new IllegalArgumentException("mirror state " + state + " is neither in sync ("
                    + ReplicationLayout.STATE_IN_SYNC + ") nor catching up (" + ReplicationLayout.STATE_CATCHING_UP
                    + ")");
        }
        Mark current = read(region);
        Mark next = new Mark(current.seq() + 1, epoch, state);
        int at = ((next.seq() & 1) == 0) ? SLOT0_OFFSET : SLOT1_OFFSET;
        byte[] slot = encodeSlot(next);
        region.write(at, slot, 0, slot.length);
        region.persist(at, slot.length);
        return next;
    }

    /** Frontend {@code frontendId}'s confirmed redo limit, stored in its control block at {@code controlAt}. */
    public static long confirmedLimit(PersistentRegion region, long controlAt) {
        return region.getLongVolatile(controlAt + ControlBlockLayout.MIRROR_LIMIT_OFFSET);
    }

    /** Stores and persists a confirmed redo limit (one atomic 8-byte store). */
    public static void writeConfirmedLimit(PersistentRegion region, long controlAt, long limit) {
        region.putLongVolatile(controlAt + ControlBlockLayout.MIRROR_LIMIT_OFFSET, limit);
        region.persist(controlAt + ControlBlockLayout.MIRROR_LIMIT_OFFSET, 8);
    }
}
