package io.asymnvm.frontend;

import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code readLong} and {@code readInt} read the page arrays in place (issue 8, goal 1): at every offset around page
 * boundaries, inside a page and straddling two, in a call under the lock, in a lockless read-only call, and after
 * the transaction's own write of the page (its private copy), they return what the byte-wise {@code read} gives.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReadPrimitivesTest {
    /** Bytes of the block: a few pages, so it holds page boundaries whatever the page size. */
    static final int SIZE = 3 * 4096 + 64;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** A block of patterned bytes and reads of it. */
    public interface Raw {
        /** Allocates the block, fills byte {@code i} with {@code 31 * i + 7}, sets it as root; returns it. */
        @PersistentTransaction
        long create();

        /** Longs at every offset {@code [from, to)} of the block (lockless after the first call). */
        @PersistentTransaction(readOnly = true)
        long[] longs(int from, int to);

        @PersistentTransaction(readOnly = true)
        int[] ints(int from, int to);

        /** The byte-wise reference: {@code to - from + 8} bytes at {@code from}. */
        @PersistentTransaction(readOnly = true)
        byte[] bytes(int from, int to);

        /** Writes {@code value} at {@code at}, then returns the longs of {@code [from, to)} as this transaction sees them. */
        @PersistentTransaction
        long[] writeThenLongs(int at, long value, int from, int to);
    }

    static final class RawImpl implements Raw {
        @Override
        public long create() {
            Transaction tx = Transaction.current();
            long a = tx.allocate(SIZE);
            byte[] b = new byte[SIZE];
            for (int i = 0; i < SIZE; i++) {
                b[i] = (byte) (31 * i + 7);
            }
            tx.write(a, b);
            tx.setRoot(a);
            return a;
        }

        @Override
        public long[] longs(int from, int to) {
            Transaction tx = Transaction.current();
            long[] out = new long[to - from];
            for (int i = from; i < to; i++) {
                out[i - from] = tx.readLong(tx.root() + i);
            }
            return out;
        }

        @Override
        public int[] ints(int from, int to) {
            Transaction tx = Transaction.current();
            int[] out = new int[to - from];
            for (int i = from; i < to; i++) {
                out[i - from] = tx.readInt(tx.root() + i);
            }
            return out;
        }

        @Override
        public byte[] bytes(int from, int to) {
            Transaction tx = Transaction.current();
            return tx.read(tx.root() + from, to - from + 8);
        }

        @Override
        public long[] writeThenLongs(int at, long value, int from, int to) {
            Transaction.current().writeLong(Transaction.current().root() + at, value);
            return longs(from, to);
        }
    }

    @Test
    void shouldReadLongsAndIntsAtEveryOffsetAroundPageBoundaries() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Raw raw = nvm.transactional(Raw.class, new RawImpl());
            long block = raw.create();
            int firstBoundary = (int) (4096 - block % 4096); // offsets of the block's page boundaries (4 KiB pages)
            for (int boundary = firstBoundary; boundary + 16 <= SIZE - 8; boundary += 4096) {
                int from = boundary - 16;
                int to = boundary + 16;
                byte[] reference = raw.bytes(from, to);
                ByteBuffer le = ByteBuffer.wrap(reference).order(ByteOrder.LITTLE_ENDIAN);
                long[] expectedLongs = new long[to - from];
                int[] expectedInts = new int[to - from];
                for (int i = 0; i < to - from; i++) {
                    expectedLongs[i] = le.getLong(i);
                    expectedInts[i] = le.getInt(i);
                }
                for (int call = 0; call < 3; call++) { // the first call runs under the lock, later ones lockless
                    assertArrayEquals(expectedLongs, raw.longs(from, to), "longs around offset " + boundary);
                    assertArrayEquals(expectedInts, raw.ints(from, to), "ints around offset " + boundary);
                }
                // a write of this transaction, straddling the boundary, is seen by its own reads
                long value = 0x0102030405060708L;
                long[] seen = raw.writeThenLongs(boundary - 3, value, from, to);
                assertEquals(value, seen[boundary - 3 - from], "own write across the boundary at " + boundary);
                assertArrayEquals(seen, raw.longs(from, to), "committed write read back at " + boundary);
            }
        }
    }
}
