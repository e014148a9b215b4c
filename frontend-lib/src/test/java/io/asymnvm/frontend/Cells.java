package io.asymnvm.frontend;

/** A persistent array of long cells used by the frontend tests. */
public interface Cells {
    @PersistentTransaction
    void create(int count);

    @PersistentTransaction
    void set(int index, long value);

    @PersistentTransaction
    void add(int from, int to, long amount);

    @PersistentTransaction(durability = Durability.ASYNC)
    void setAsync(int index, long value);

    @PersistentTransaction
    void setThenFail(int index, long value);

    @PersistentTransaction(readOnly = true)
    long get(int index);

    @PersistentTransaction(readOnly = true)
    long sum();

    @PersistentTransaction(readOnly = true)
    int count();

    /** Every cell, read in one transaction. */
    @PersistentTransaction(readOnly = true)
    long[] snapshot();

    /** Declared read-only but writes: the engine must refuse it. */
    @PersistentTransaction(readOnly = true)
    void setDespiteReadOnly(int index, long value);

    /** Implementation: root block = count(8) | cells(8 x count). */
    final class Impl implements Cells {
        private static long root() {
            long r = Transaction.current().root();
            if (r == 0) {
                throw new IllegalStateException("cells not created");
            }
            return r;
        }

        @Override
        public void create(int count) {
            Transaction tx = Transaction.current();
            long block = tx.allocate(8L + 8L * count);
            tx.writeLong(block, count);
            tx.setRoot(block);
        }

        @Override
        public void set(int index, long value) {
            Transaction.current().writeLong(root() + 8 + 8L * index, value);
        }

        @Override
        public void add(int from, int to, long amount) {
            Transaction tx = Transaction.current();
            long r = root();
            tx.writeLong(r + 8 + 8L * from, tx.readLong(r + 8 + 8L * from) - amount);
            tx.writeLong(r + 8 + 8L * to, tx.readLong(r + 8 + 8L * to) + amount);
        }

        @Override
        public void setAsync(int index, long value) {
            set(index, value);
        }

        @Override
        public void setThenFail(int index, long value) {
            set(index, value);
            throw new IllegalArgumentException("refused " + value);
        }

        @Override
        public long get(int index) {
            return Transaction.current().readLong(root() + 8 + 8L * index);
        }

        @Override
        public long sum() {
            Transaction tx = Transaction.current();
            long r = root();
            long n = tx.readLong(r);
            long s = 0;
            for (int i = 0; i < n; i++) {
                s += tx.readLong(r + 8 + 8L * i);
            }
            return s;
        }

        @Override
        public long[] snapshot() {
            Transaction tx = Transaction.current();
            long r = root();
            long[] out = new long[(int) tx.readLong(r)];
            for (int i = 0; i < out.length; i++) {
                out[i] = tx.readLong(r + 8 + 8L * i);
            }
            return out;
        }

        @Override
        public void setDespiteReadOnly(int index, long value) {
            set(index, value);
        }

        @Override
        public int count() {
            long r = Transaction.current().root();
            return r == 0 ? 0 : (int) Transaction.current().readLong(r);
        }
    }
}
