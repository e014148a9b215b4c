package io.asymnvm.core.layout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The first page of each frontend's log area: the replay checkpoint and the ring watermarks.
 *
 * <p>The checkpoint ({@code appliedTxId}, ring heads) is double-buffered: the replayer writes the slot not
 * holding the newest valid checkpoint, persists it, and the valid slot with the larger sequence wins. So the
 * three values advance atomically under any crash, though none of them alone is larger than 8 bytes.
 *
 * <p>A stored slot is visible before it is durable. A remote reader that acted on such a slot (a frontend
 * reusing the ring space it releases) could overwrite the log that a crash, losing the slot, needs to replay it.
 * So the replayer stores the slot's sequence as {@code publishedSeq} only after persisting the slot, and remote
 * readers take {@link #publishedCheckpoint}. The published word itself is never persisted: a lost one only
 * lags.
 *
 * <pre>
 *   0  slot 0: seq(8) appliedTxId(8) redoHead(8) semHead(8) reserved(24) crc32c(4) pad(4)
 *  64  slot 1: same
 * 128  durableSemTail(8)  logical semantic-ring position made durable by the last FLUSH (stamped by the NIC)
 * 136  attachEpoch(8)     incremented on every attach; fences older sessions of the same frontend
 * 144  state(8)           0 never attached, 1 attached, 2 detached cleanly
 * 152  publishedSeq(8)    sequence of the newest checkpoint known durable (stored after its persist)
 * 160  mirrorLimit(8)     a mirror's confirmed redo limit ({@link MirrorStateLayout}); unused on a backend
 * 168  mirrorSemStart(8)  a mirror's: where its semantic ring holds this frontend's records from (the last
 *                         MIRROR_POSTING start); 0 on a backend and on a mirror no frontend added at run time
 * 176  reserved up to 192
 * </pre>
 */
public final class ControlBlockLayout {
    public static final int SLOT_LENGTH = 64;
    public static final int SLOT0_OFFSET = 0;
    public static final int SLOT1_OFFSET = 64;
    public static final int SLOT_SEQ_OFFSET = 0;
    public static final int SLOT_APPLIED_OFFSET = 8;
    public static final int SLOT_REDO_HEAD_OFFSET = 16;
    public static final int SLOT_SEM_HEAD_OFFSET = 24;
    public static final int SLOT_CRC_OFFSET = 56;
    public static final int DURABLE_SEM_TAIL_OFFSET = 128;
    public static final int ATTACH_EPOCH_OFFSET = 136;
    public static final int STATE_OFFSET = 144;
    public static final int PUBLISHED_SEQ_OFFSET = 152;
    /** A mirror's confirmed redo limit of this frontend (see {@link MirrorStateLayout}). */
    public static final int MIRROR_LIMIT_OFFSET = 160;
    /**
     * A mirror's semantic start of this frontend: a frontend that adds the mirror at run time (or reconnects to it)
     * re-posts its retained records from this ring position on; the records before it were applied on the backend
     * and reach the mirror as redo, never in its ring. Raised only, with one atomic 8-byte store; cleared at
     * promotion. 0 (a blank page) states nothing.
     */
    public static final int MIRROR_SEM_START_OFFSET = 168;
    /** Bytes a reader needs to decode everything above. */
    public static final int READ_LENGTH = 192;

    public static final long STATE_NEVER_ATTACHED = 0;
    public static final long STATE_ATTACHED = 1;
    public static final long STATE_DETACHED = 2;

    private ControlBlockLayout() {
    }

    /** A replay checkpoint: every transaction with id at most {@code appliedTxId} is in the image. */
    public record Checkpoint(long seq, long appliedTxId, long redoHead, long semHead) {
        public static final Checkpoint INITIAL = new Checkpoint(0, 0, 0, 0);
    }

    public static byte[] encodeSlot(Checkpoint cp) {
        ByteBuffer b = ByteBuffer.allocate(SLOT_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(SLOT_SEQ_OFFSET, cp.seq());
        b.putLong(SLOT_APPLIED_OFFSET, cp.appliedTxId());
        b.putLong(SLOT_REDO_HEAD_OFFSET, cp.redoHead());
        b.putLong(SLOT_SEM_HEAD_OFFSET, cp.semHead());
        b.putInt(SLOT_CRC_OFFSET, slotCrc(b.array(), 0));
        return b.array();
    }

    private static int slotCrc(byte[] bytes, int slotOffset) {
        CRC32C c = new CRC32C();
        c.update(bytes, slotOffset, SLOT_CRC_OFFSET);
        return (int) c.getValue();
    }

    /** Offset of the slot the next checkpoint must be written to, given the current newest one. */
    public static int nextSlotOffset(Checkpoint current) {
        return ((current.seq() + 1) & 1) == 0 ? SLOT0_OFFSET : SLOT1_OFFSET;
    }

    /**
     * Decodes the newest valid checkpoint from a control block image of at least {@link #READ_LENGTH} bytes.
     * A slot that fails its CRC (torn by a crash mid-update) is ignored; with neither valid, the initial
     * checkpoint (nothing applied) is returned.
     */
    public static Checkpoint newestCheckpoint(byte[] block) {
        Checkpoint a = decodeSlot(block, SLOT0_OFFSET);
        Checkpoint b = decodeSlot(block, SLOT1_OFFSET);
        if (a == null) {
            return b == null ? Checkpoint.INITIAL : b;
        }
        if (b == null) {
            return a;
        }
        return a.seq() >= b.seq() ? a : b;
    }

    /**
     * The newest valid checkpoint whose sequence is at most the published one: what a reader over the fabric
     * may act on (see the class comment). The initial checkpoint if none is published yet.
     */
    public static Checkpoint publishedCheckpoint(byte[] block) {
        long published = ByteBuffer.wrap(block).order(ByteOrder.LITTLE_ENDIAN).getLong(PUBLISHED_SEQ_OFFSET);
        Checkpoint a = decodeSlot(block, SLOT0_OFFSET);
        Checkpoint b = decodeSlot(block, SLOT1_OFFSET);
        a = a != null && a.seq() <= published ? a : null;
        b = b != null && b.seq() <= published ? b : null;
        if (a == null) {
            return b == null ? Checkpoint.INITIAL : b;
        }
        return b == null || a.seq() >= b.seq() ? a : b;
    }

    static Checkpoint decodeSlot(byte[] block, int slotOffset) {
        ByteBuffer b = ByteBuffer.wrap(block).order(ByteOrder.LITTLE_ENDIAN);
        long seq = b.getLong(slotOffset + SLOT_SEQ_OFFSET);
        int crc = b.getInt(slotOffset + SLOT_CRC_OFFSET);
        if (seq == 0 || crc != slotCrc(block, slotOffset)) {
            return null;
        }
        return new Checkpoint(seq, b.getLong(slotOffset + SLOT_APPLIED_OFFSET),
                b.getLong(slotOffset + SLOT_REDO_HEAD_OFFSET), b.getLong(slotOffset + SLOT_SEM_HEAD_OFFSET));
    }

    public static long durableSemTail(byte[] block) {
        return ByteBuffer.wrap(block).order(ByteOrder.LITTLE_ENDIAN).getLong(DURABLE_SEM_TAIL_OFFSET);
    }

    public static long mirrorSemStart(byte[] block) {
        return ByteBuffer.wrap(block).order(ByteOrder.LITTLE_ENDIAN).getLong(MIRROR_SEM_START_OFFSET);
    }

    public static long attachEpoch(byte[] block) {
        return ByteBuffer.wrap(block).order(ByteOrder.LITTLE_ENDIAN).getLong(ATTACH_EPOCH_OFFSET);
    }

    public static long state(byte[] block) {
        return ByteBuffer.wrap(block).order(ByteOrder.LITTLE_ENDIAN).getLong(STATE_OFFSET);
    }
}
