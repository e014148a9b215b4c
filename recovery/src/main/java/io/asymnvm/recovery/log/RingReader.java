package io.asymnvm.recovery.log;

import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.RedoBatchLayout;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.core.region.PersistentRegion;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Reads records of one ring (semantic or redo) at logical positions, validating length, type, logical
 * position and CRC32C. A record is valid only if all of them match, so a torn write, a record from an earlier
 * lap of the ring and plain garbage all read as {@link Kind#INVALID}. Padding records are reported so a
 * reader can skip to the next lap. Stateless apart from its geometry; thread-safe.
 */
public final class RingReader {

    /** What was found at a position. */
    public enum Kind { VALID, PADDING, INVALID }

    /**
     * One read. For {@code VALID}, {@code bytes} holds the record (unpadded length) and {@code next} the
     * position after it; for {@code PADDING}, {@code next} is the start of the next lap; for {@code INVALID},
     * {@code reason}, {@code expected} and {@code actual} say what did not match.
     */
    public record Entry(Kind kind, long position, long next, byte[] bytes, String reason, long expected,
                        long actual) {
    }

    private final PersistentRegion region;
    private final long base;
    private final long capacity;
    private final short type;
    private final int minLength;
    private final String name;

    public RingReader(PersistentRegion region, long base, long capacity, short type, String name) {
        if (capacity <= 0 || capacity % LogRecordLayout.ALIGNMENT != 0) {
            throw new IllegalArgumentException("ring capacity not a positive multiple of "
                    + LogRecordLayout.ALIGNMENT + ": " + capacity);
        }
        this.region = region;
        this.base = base;
        this.capacity = capacity;
        this.type = type;
        this.minLength = type == LogRecordLayout.TYPE_SEMANTIC ? SemanticRecordLayout.HEADER_LENGTH
                : type == LogRecordLayout.TYPE_REDO_BATCH ? RedoBatchLayout.HEADER_LENGTH
                : LogRecordLayout.COMMON_HEADER_LENGTH;
        this.name = name;
    }

    public String name() {
        return name;
    }

    public long capacity() {
        return capacity;
    }

    /** Backing-region offset of a logical position. */
    public long offsetOf(long position) {
        return base + Math.floorMod(position, capacity);
    }

    public Entry read(long position) {
        if ((position & (LogRecordLayout.ALIGNMENT - 1)) != 0) {
            // records start aligned; an unaligned position (a damaged head) would read a header across the ring's end
            return invalid(position, "record alignment", position & -LogRecordLayout.ALIGNMENT, position);
        }
        long inRing = Math.floorMod(position, capacity);
        byte[] header = region.read(base + inRing, LogRecordLayout.ALIGNMENT);
        ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
        int storedCrc = h.getInt(LogRecordLayout.CRC_OFFSET);
        int length = h.getInt(LogRecordLayout.LENGTH_OFFSET);
        short recordType = h.getShort(LogRecordLayout.TYPE_OFFSET);
        long recordPosition = h.getLong(LogRecordLayout.POSITION_OFFSET);
        if (recordPosition != position) {
            return invalid(position, "record position", position, recordPosition);
        }
        // length <= capacity - inRing (a multiple of the alignment) implies its aligned length fits too; comparing
        // the raw length avoids the int overflow of aligning a garbage length near Integer.MAX_VALUE
        if (length < LogRecordLayout.COMMON_HEADER_LENGTH || length > capacity - inRing) {
            return invalid(position, "record length", capacity - inRing, Integer.toUnsignedLong(length));
        }
        if (recordType == LogRecordLayout.TYPE_PADDING) {
            if (length > header.length) {
                return invalid(position, "padding length", LogRecordLayout.COMMON_HEADER_LENGTH, length);
            }
            int computed = LogRecordLayout.crc(header, 0, length);
            if (computed != storedCrc) {
                return invalid(position, "padding crc32c", Integer.toUnsignedLong(storedCrc),
                        Integer.toUnsignedLong(computed));
            }
            long span = LogRecordLayout.paddingSpan(header, 0);
            if (span != capacity - inRing) {
                return invalid(position, "padding span", capacity - inRing, span);
            }
            return new Entry(Kind.PADDING, position, position + span, null, null, 0, 0);
        }
        if (recordType != type) {
            return invalid(position, "record type", type, recordType);
        }
        if (length < minLength) {
            // shorter than its type's header: no writer makes one, and its fields would be read past its end
            return invalid(position, "record length", minLength, length);
        }
        byte[] record;
        if (length <= header.length) {
            record = java.util.Arrays.copyOf(header, length);
        } else {
            record = region.read(base + inRing, length);
        }
        int computed = LogRecordLayout.crc(record, 0, length);
        if (computed != storedCrc) {
            return invalid(position, "crc32c", Integer.toUnsignedLong(storedCrc), Integer.toUnsignedLong(computed));
        }
        return new Entry(Kind.VALID, position, position + LogRecordLayout.alignedLength(length), record, null, 0, 0);
    }

    /**
     * The length stored in the header at {@code position}, unchecked: for telling a damaged record (followed by a
     * valid one) from a torn tail, see {@link RingDamage#ofUnwatermarked}.
     */
    public int storedLength(long position) {
        byte[] header = region.read(base + Math.floorMod(position, capacity), LogRecordLayout.COMMON_HEADER_LENGTH);
        return ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).getInt(LogRecordLayout.LENGTH_OFFSET);
    }

    private static Entry invalid(long position, String reason, long expected, long actual) {
        return new Entry(Kind.INVALID, position, position, null, reason, expected, actual);
    }
}
