package io.asymnvm.core.layout;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.CorruptRecordException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.region.PersistentRegion;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * The superblock at offset 0 of every PM image: identity, geometry and the offsets of every other area.
 * Little-endian, CRC32C over bytes {@code [0, CRC_OFFSET)}.
 *
 * <pre>
 *   0                   8         12        16                  24
 *   +-------------------+---------+---------+-------------------+
 *   | magic "ASYMNVM1"  | version | pageSize| fileSize          |
 *   +-------------------+---------+---------+-------------------+
 *  24 slabSize | 32 slabCount | 40 maxFrontends(4) pad(4)
 *  48 slabTableOffset | 56 logAreaOffset | 64 logAreaStride
 *  72 semRingCapacity | 80 redoRingCapacity | 88 heapOffset
 *  96 epoch | 104 identity (16 bytes) | 120 createdMillis
 * 128 crc32c(4)
 * </pre>
 *
 * The whole image:
 * <pre>
 * +------------+----------------+---------------------------------------+---------------------------+
 * | superblock | slab owner tbl | log area x maxFrontends               | heap: slabCount x slabSize|
 * | 1 page     | 8 B per slab   | [control page | sem ring | redo ring] |                           |
 * +------------+----------------+---------------------------------------+---------------------------+
 * </pre>
 */
public final class SuperblockLayout {
    public static final long MAGIC = 0x314D564E4D595341L; // "ASYMNVM1" little-endian
    public static final int FORMAT_VERSION = 1;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 8;
    public static final int PAGE_SIZE_OFFSET = 12;
    public static final int FILE_SIZE_OFFSET = 16;
    public static final int SLAB_SIZE_OFFSET = 24;
    public static final int SLAB_COUNT_OFFSET = 32;
    public static final int MAX_FRONTENDS_OFFSET = 40;
    public static final int SLAB_TABLE_OFFSET_OFFSET = 48;
    public static final int LOG_AREA_OFFSET_OFFSET = 56;
    public static final int LOG_AREA_STRIDE_OFFSET = 64;
    public static final int SEM_RING_CAPACITY_OFFSET = 72;
    public static final int REDO_RING_CAPACITY_OFFSET = 80;
    public static final int HEAP_OFFSET_OFFSET = 88;
    public static final int EPOCH_OFFSET = 96;
    public static final int IDENTITY_OFFSET = 104;
    public static final int CREATED_OFFSET = 120;
    public static final int CRC_OFFSET = 128;
    public static final int LENGTH = 132;
    /**
     * The promoted epoch word, outside the CRC'd superblock (same first page): a mirror promoted to backend, or one
     * following a newer backend, stores its new epoch here with one atomic 8-byte store, so no crash can tear the
     * superblock. The node's epoch is the larger of this word and {@code epoch} ({@link #effectiveEpoch}); zero in
     * images that were never promoted.
     */
    public static final int PROMOTED_EPOCH_OFFSET = 256;
    /** Most frontends a superblock may describe (the backend's configuration limit). */
    public static final int MAX_FRONTENDS = 1024;

    private SuperblockLayout() {
    }

    /** Decoded superblock values. */
    public record Superblock(int pageSize, long fileSize, long slabSize, long slabCount, int maxFrontends,
                             long slabTableOffset, long logAreaOffset, long logAreaStride,
                             long semRingCapacity, long redoRingCapacity, long heapOffset, long epoch,
                             UUID identity, long createdMillis) {

        /** Offset of frontend {@code frontendId}'s log area (control page first). */
        public long logAreaOf(int frontendId) {
            return logAreaOffset + logAreaStride * frontendId;
        }

        public long controlBlockOf(int frontendId) {
            return logAreaOf(frontendId);
        }

        public long semRingOf(int frontendId) {
            return logAreaOf(frontendId) + pageSize;
        }

        public long redoRingOf(int frontendId) {
            return semRingOf(frontendId) + semRingCapacity;
        }

        public long slabOffset(long slabIndex) {
            return heapOffset + slabIndex * slabSize;
        }
    }

    /**
     * Computes the geometry of a new image. Rejects sizes that leave no room for at least one slab.
     */
    public static Superblock plan(long fileSize, int pageSize, long slabSize, int maxFrontends,
                                  long semRingCapacity, long redoRingCapacity, UUID identity, long createdMillis) {
        long slabTableOffset = pageSize;
        // Upper bound on slabs to size the table, then the exact count from what is left.
        long maxSlabs = fileSize / slabSize;
        long slabTableLength = alignUp(Math.max(8, maxSlabs * SlabTableLayout.ENTRY_LENGTH), pageSize);
        long logAreaOffset = slabTableOffset + slabTableLength;
        long stride = pageSize + semRingCapacity + redoRingCapacity;
        long heapOffset = alignUp(logAreaOffset + stride * maxFrontends, slabSize);
        long slabCount = (fileSize - heapOffset) / slabSize;
        if (heapOffset >= fileSize || slabCount < 1) {
            long minimum = heapOffset + slabSize;
            throw new IllegalArgumentException("PM size too small: " + fileSize + " bytes; minimum for "
                    + maxFrontends + " frontends with " + semRingCapacity + "+" + redoRingCapacity
                    + " byte rings and " + slabSize + " byte slabs is " + minimum);
        }
        return new Superblock(pageSize, fileSize, slabSize, slabCount, maxFrontends, slabTableOffset,
                logAreaOffset, stride, semRingCapacity, redoRingCapacity, heapOffset, 1, identity, createdMillis);
    }

    private static long alignUp(long v, long a) {
        return ((v + a - 1) / a) * a;
    }

    public static byte[] encode(Superblock sb) {
        ByteBuffer b = ByteBuffer.allocate(LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(MAGIC_OFFSET, MAGIC);
        b.putInt(VERSION_OFFSET, FORMAT_VERSION);
        b.putInt(PAGE_SIZE_OFFSET, sb.pageSize());
        b.putLong(FILE_SIZE_OFFSET, sb.fileSize());
        b.putLong(SLAB_SIZE_OFFSET, sb.slabSize());
        b.putLong(SLAB_COUNT_OFFSET, sb.slabCount());
        b.putInt(MAX_FRONTENDS_OFFSET, sb.maxFrontends());
        b.putLong(SLAB_TABLE_OFFSET_OFFSET, sb.slabTableOffset());
        b.putLong(LOG_AREA_OFFSET_OFFSET, sb.logAreaOffset());
        b.putLong(LOG_AREA_STRIDE_OFFSET, sb.logAreaStride());
        b.putLong(SEM_RING_CAPACITY_OFFSET, sb.semRingCapacity());
        b.putLong(REDO_RING_CAPACITY_OFFSET, sb.redoRingCapacity());
        b.putLong(HEAP_OFFSET_OFFSET, sb.heapOffset());
        b.putLong(EPOCH_OFFSET, sb.epoch());
        b.putLong(IDENTITY_OFFSET, sb.identity().getMostSignificantBits());
        b.putLong(IDENTITY_OFFSET + 8, sb.identity().getLeastSignificantBits());
        b.putLong(CREATED_OFFSET, sb.createdMillis());
        b.putInt(CRC_OFFSET, crc(b.array()));
        return b.array();
    }

    /**
     * Writes and persists the superblock, the magic word last and on its own (an 8-byte store is atomic): a
     * crash while formatting leaves either a zero magic (the region is still blank) or a complete superblock,
     * never one that reads as corrupt.
     */
    public static void write(PersistentRegion region, Superblock sb) {
        byte[] bytes = encode(sb);
        region.write(VERSION_OFFSET, bytes, VERSION_OFFSET, bytes.length - VERSION_OFFSET);
        region.persist(VERSION_OFFSET, bytes.length - VERSION_OFFSET);
        region.putLongVolatile(MAGIC_OFFSET, MAGIC);
        region.persist(MAGIC_OFFSET, 8);
    }

    /** The node's epoch: the superblock's, or the promoted epoch word if larger. */
    public static long effectiveEpoch(PersistentRegion region, Superblock sb) {
        return Math.max(sb.epoch(), region.getLongVolatile(PROMOTED_EPOCH_OFFSET));
    }

    /** Stores and persists {@code epoch} as the promoted epoch word (one atomic 8-byte store). */
    public static void writePromotedEpoch(PersistentRegion region, long epoch) {
        region.putLongVolatile(PROMOTED_EPOCH_OFFSET, epoch);
        region.persist(PROMOTED_EPOCH_OFFSET, 8);
    }

    /** {@code sb} with another epoch (the geometry and identity unchanged): a mirror formatted after a promotion. */
    public static Superblock withEpoch(Superblock sb, long epoch) {
        return new Superblock(sb.pageSize(), sb.fileSize(), sb.slabSize(), sb.slabCount(), sb.maxFrontends(),
                sb.slabTableOffset(), sb.logAreaOffset(), sb.logAreaStride(), sb.semRingCapacity(),
                sb.redoRingCapacity(), sb.heapOffset(), epoch, sb.identity(), sb.createdMillis());
    }

    static int crc(byte[] bytes) {
        CRC32C c = new CRC32C();
        c.update(bytes, 0, CRC_OFFSET);
        return (int) c.getValue();
    }

    /**
     * Decodes and validates a superblock image. A wrong magic or CRC is a {@link CorruptRecordException}
     * naming {@code where}, the offset and expected/actual values; another format version fails with both
     * versions in the message; inconsistent geometry is reported as corruption too.
     */
    public static Superblock decode(byte[] bytes, String where, long actualFileSize) {
        if (bytes.length < LENGTH) {
            throw new CorruptRecordException(where, 0, "superblock length", LENGTH, bytes.length);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        long magic = b.getLong(MAGIC_OFFSET);
        if (magic != MAGIC) {
            throw new CorruptRecordException(where, MAGIC_OFFSET, "superblock magic", MAGIC, magic);
        }
        int version = b.getInt(VERSION_OFFSET);
        if (version != FORMAT_VERSION) {
            throw new AsymNvmException(ErrorCode.FORMAT_VERSION_MISMATCH, where + " has format version " + version
                    + ", this build reads version " + FORMAT_VERSION);
        }
        int stored = b.getInt(CRC_OFFSET);
        int computed = crc(bytes);
        if (stored != computed) {
            throw new CorruptRecordException(where, CRC_OFFSET, "superblock crc32c",
                    Integer.toUnsignedLong(stored), Integer.toUnsignedLong(computed));
        }
        Superblock sb = new Superblock(b.getInt(PAGE_SIZE_OFFSET), b.getLong(FILE_SIZE_OFFSET),
                b.getLong(SLAB_SIZE_OFFSET), b.getLong(SLAB_COUNT_OFFSET), b.getInt(MAX_FRONTENDS_OFFSET),
                b.getLong(SLAB_TABLE_OFFSET_OFFSET), b.getLong(LOG_AREA_OFFSET_OFFSET),
                b.getLong(LOG_AREA_STRIDE_OFFSET), b.getLong(SEM_RING_CAPACITY_OFFSET),
                b.getLong(REDO_RING_CAPACITY_OFFSET), b.getLong(HEAP_OFFSET_OFFSET), b.getLong(EPOCH_OFFSET),
                new UUID(b.getLong(IDENTITY_OFFSET), b.getLong(IDENTITY_OFFSET + 8)), b.getLong(CREATED_OFFSET));
        if (sb.fileSize() != actualFileSize) {
            throw new CorruptRecordException(where, FILE_SIZE_OFFSET, "file size", sb.fileSize(), actualFileSize);
        }
        if (sb.heapOffset() + sb.slabCount() * sb.slabSize() > actualFileSize) {
            throw new CorruptRecordException(where, HEAP_OFFSET_OFFSET, "heap end within file",
                    actualFileSize, sb.heapOffset() + sb.slabCount() * sb.slabSize());
        }
        checkGeometry(sb, where);
        return sb;
    }

    /**
     * The layout is a function of file size, page size, slab size, frontends and ring capacities ({@link #plan}):
     * a CRC-valid superblock whose parameters are out of range or whose offsets differ from that plan (a damaged or
     * forged image) would send every reader outside the file, so it is corruption naming the field.
     */
    private static void checkGeometry(Superblock sb, String where) {
        requirePowerOfTwo(where, PAGE_SIZE_OFFSET, "page size", sb.pageSize(), 512, 1 << 20);
        requirePowerOfTwo(where, SLAB_SIZE_OFFSET, "slab size", sb.slabSize(), sb.pageSize(), 1L << 30);
        requireRange(where, MAX_FRONTENDS_OFFSET, "max frontends", sb.maxFrontends(), 1, MAX_FRONTENDS);
        requirePageMultiple(where, SEM_RING_CAPACITY_OFFSET, "semantic ring capacity", sb.semRingCapacity(),
                sb.pageSize());
        requirePageMultiple(where, REDO_RING_CAPACITY_OFFSET, "redo ring capacity", sb.redoRingCapacity(),
                sb.pageSize());
        Superblock planned;
        try {
            planned = plan(sb.fileSize(), sb.pageSize(), sb.slabSize(), sb.maxFrontends(), sb.semRingCapacity(),
                    sb.redoRingCapacity(), sb.identity(), sb.createdMillis());
        } catch (IllegalArgumentException tooSmall) {
            throw new CorruptRecordException(where, FILE_SIZE_OFFSET, "file size holding the recorded geometry ("
                    + tooSmall.getMessage() + ")", sb.fileSize(), sb.fileSize());
        }
        requireEqual(where, SLAB_TABLE_OFFSET_OFFSET, "slab table offset", planned.slabTableOffset(),
                sb.slabTableOffset());
        requireEqual(where, LOG_AREA_OFFSET_OFFSET, "log area offset", planned.logAreaOffset(), sb.logAreaOffset());
        requireEqual(where, LOG_AREA_STRIDE_OFFSET, "log area stride", planned.logAreaStride(), sb.logAreaStride());
        requireEqual(where, HEAP_OFFSET_OFFSET, "heap offset", planned.heapOffset(), sb.heapOffset());
        requireEqual(where, SLAB_COUNT_OFFSET, "slab count", planned.slabCount(), sb.slabCount());
    }

    private static void requireRange(String where, int offset, String what, long value, long min, long max) {
        if (value < min || value > max) {
            throw new CorruptRecordException(where, offset, what + " within [" + min + ", " + max + "]",
                    value < min ? min : max, value);
        }
    }

    private static void requirePowerOfTwo(String where, int offset, String what, long value, long min, long max) {
        requireRange(where, offset, what, value, min, max);
        if (Long.bitCount(value) != 1) {
            throw new CorruptRecordException(where, offset, what + " a power of two", Long.highestOneBit(value),
                    value);
        }
    }

    private static void requirePageMultiple(String where, int offset, String what, long value, int pageSize) {
        requireRange(where, offset, what, value, pageSize, 1L << 30);
        if (value % pageSize != 0) {
            throw new CorruptRecordException(where, offset, what + " a multiple of the page size " + pageSize,
                    value - value % pageSize, value);
        }
    }

    private static void requireEqual(String where, int offset, String what, long planned, long actual) {
        if (planned != actual) {
            throw new CorruptRecordException(where, offset, what + " of the planned layout", planned, actual);
        }
    }
}
