package io.asymnvm.recovery.log;

import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.core.region.MappedRegion;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

/**
 * A semantic ring of {@link #CAPACITY} bytes at a non-zero base of a small mapped file, with helpers that write
 * records at logical positions the way a frontend does (records never wrap; padding fills the end of a lap).
 */
final class RingFixture implements AutoCloseable {
    static final long BASE = 192;
    static final long CAPACITY = 4096;
    static final String NAME = "test semantic ring";

    final MappedRegion region;
    final RingReader reader;
    /** Logical position where the next record goes. */
    long tail;

    RingFixture(Path dir) {
        this(dir, 0);
    }

    RingFixture(Path dir, long start) {
        region = MappedRegion.create(dir.resolve("ring.pm"), BASE + CAPACITY + 256, MappedRegion.MapMode.FILE);
        reader = new RingReader(region, BASE, CAPACITY, LogRecordLayout.TYPE_SEMANTIC, NAME);
        tail = start;
    }

    static byte[] args(int length, long seed) {
        byte[] a = new byte[length];
        new java.util.Random(seed).nextBytes(a);
        return a;
    }

    /** Writes a record at an explicit position (no padding logic). */
    byte[] put(long position, long txId, int argsLength) {
        byte[] r = SemanticRecordLayout.encode(position, txId, 0xABCDL + txId, args(argsLength, txId), argsLength);
        region.write(reader.offsetOf(position), r, 0, r.length);
        return r;
    }

    /** Appends a record at the tail, padding to the next lap first if it would not fit; returns its position. */
    long append(long txId, int argsLength) {
        int aligned = LogRecordLayout.alignedLength(SemanticRecordLayout.HEADER_LENGTH + argsLength);
        long inRing = Math.floorMod(tail, CAPACITY);
        if (inRing + aligned > CAPACITY) {
            pad(tail);
        }
        long at = tail;
        put(at, txId, argsLength);
        tail = at + aligned;
        return at;
    }

    /** Writes a padding record from {@code position} to the end of its lap and moves the tail to the next lap. */
    void pad(long position) {
        int span = (int) (CAPACITY - Math.floorMod(position, CAPACITY));
        byte[] p = LogRecordLayout.padding(position, span);
        region.write(reader.offsetOf(position), p, 0, p.length);
        tail = position + span;
    }

    /** Flips one byte at {@code delta} bytes into the record at {@code position}. */
    void flip(long position, int delta) {
        long at = reader.offsetOf(position) + delta;
        byte[] b = region.read(at, 1);
        b[0] ^= 0x5A;
        region.write(at, b, 0, 1);
    }

    void putInt(long position, int fieldOffset, int value) {
        byte[] b = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array();
        region.write(reader.offsetOf(position) + fieldOffset, b, 0, 4);
    }

    int storedCrc(long position) {
        return region.getInt(reader.offsetOf(position) + LogRecordLayout.CRC_OFFSET);
    }

    @Override
    public void close() {
        region.close();
    }
}
