package io.asymnvm.frontend;

import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/**
 * A transaction's write set keeps the latest bytes of each range once: overlapping writes are logged as the
 * union of what they changed, so a block written twice costs its size in redo once (before, a 150 KiB block
 * zeroed and filled was refused for writing 300 KiB of redo over the 256 KiB limit), and every partial overlap
 * replays to the bytes the transaction saw last.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WriteSetTest {
    /** Overlapping writes into one block. */
    public interface Overwrites {
        @PersistentTransaction
        long writeTwice(int size, long seed);

        @PersistentTransaction(readOnly = true)
        byte[] read(long address, int size);
    }

    static final class Impl implements Overwrites {
        @Override
        public long writeTwice(int size, long seed) {
            Transaction tx = Transaction.current();
            long a = tx.allocate(size);
            Random r = new Random(seed);
            byte[] first = new byte[size];
            r.nextBytes(first);
            tx.write(a, first);
            byte[] second = new byte[size];
            r.nextBytes(second);
            tx.write(a, second); // covers the first exactly
            for (int i = 0; i < 200; i++) { // partial overlaps: inside, across either end, touching
                int from = r.nextInt(size);
                byte[] patch = new byte[1 + r.nextInt(Math.min(4096, size - from))];
                r.nextBytes(patch);
                tx.write(a + from, patch);
            }
            return a;
        }

        @Override
        public byte[] read(long address, int size) {
            return Transaction.current().read(address, size);
        }
    }

    /** What {@link Impl#writeTwice} leaves, computed in DRAM. */
    private static byte[] expected(int size, long seed) {
        Random r = new Random(seed);
        byte[] first = new byte[size];
        r.nextBytes(first);
        byte[] out = new byte[size];
        r.nextBytes(out);
        for (int i = 0; i < 200; i++) {
            int from = r.nextInt(size);
            byte[] patch = new byte[1 + r.nextInt(Math.min(4096, size - from))];
            r.nextBytes(patch);
            System.arraycopy(patch, 0, out, from, patch.length);
        }
        return out;
    }

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void shouldLogOverlappingWritesOnceAndReplayTheLastBytes() {
        int size = 150 << 10;
        long seed = 42;
        long address;
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.LOCAL)) {
            try (AsymNvm nvm = backend.open(0, FrontendOptions.defaults())) {
                Overwrites o = nvm.transactional(Overwrites.class, new Impl());
                address = o.writeTwice(size, seed);
                assertArrayEquals(expected(size, seed), o.read(address, size), "as the transaction saw it");
                nvm.sync();
            }
            backend.restart();
            try (AsymNvm nvm = backend.open(0, FrontendOptions.defaults())) {
                Overwrites o = nvm.transactional(Overwrites.class, new Impl());
                byte[] got = o.read(address, size);
                assertArrayEquals(expected(size, seed), got, "as replayed into the PM image (first difference at "
                        + Arrays.mismatch(expected(size, seed), got) + ")");
            }
        }
    }
}
