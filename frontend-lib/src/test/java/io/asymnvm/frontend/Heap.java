package io.asymnvm.frontend;

/** Raw access to the persistent heap through transactions, for allocator and bounds tests. */
public interface Heap {
    @PersistentTransaction
    void writeLongAt(long address, long value);

    @PersistentTransaction(readOnly = true)
    long readLongAt(long address);

    @PersistentTransaction(readOnly = true)
    byte[] readBytes(long address, int length);

    @PersistentTransaction
    long allocate(long size);

    /** Allocates a block of {@code size} bytes and fills it with {@link #pattern(long, int)} of {@code seed}. */
    @PersistentTransaction
    long allocateFilled(long size, long seed);

    @PersistentTransaction
    void free(long address);

    /** Frees the block twice in one transaction (the second must be refused, aborting both). */
    @PersistentTransaction
    void freeTwice(long address);

    /** Deterministic content of a filled block. */
    static byte[] pattern(long seed, int length) {
        byte[] b = new byte[length];
        long x = seed * 0x9E3779B97F4A7C15L + 1;
        for (int i = 0; i < length; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            b[i] = (byte) (x | 1);
        }
        return b;
    }

    final class Impl implements Heap {
        @Override
        public void writeLongAt(long address, long value) {
            Transaction.current().writeLong(address, value);
        }

        @Override
        public long readLongAt(long address) {
            return Transaction.current().readLong(address);
        }

        @Override
        public byte[] readBytes(long address, int length) {
            return Transaction.current().read(address, length);
        }

        @Override
        public long allocate(long size) {
            return Transaction.current().allocate(size);
        }

        @Override
        public long allocateFilled(long size, long seed) {
            Transaction tx = Transaction.current();
            long block = tx.allocate(size);
            tx.write(block, pattern(seed, (int) size));
            return block;
        }

        @Override
        public void free(long address) {
            Transaction.current().free(address);
        }

        @Override
        public void freeTwice(long address) {
            Transaction.current().free(address);
            Transaction.current().free(address);
        }
    }
}
