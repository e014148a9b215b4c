package io.asymnvm.frontend;

import java.nio.charset.StandardCharsets;

/**
 * Transactions whose arguments are a {@code String}, a {@code long[]} and a record, so that the Kryo encoding of
 * semantic-record arguments is exercised. Root block: text slot (address, 0 = none) | values slot | transfers(8).
 */
public interface Notes {
    /** An argument type the semantic log must serialize. */
    record Transfer(String from, String to, long amount) {
    }

    @PersistentTransaction
    void init();

    @PersistentTransaction
    void putText(String text);

    @PersistentTransaction(readOnly = true)
    String text();

    @PersistentTransaction
    void putValues(long[] values);

    @PersistentTransaction(readOnly = true)
    long[] values();

    @PersistentTransaction
    long apply(Transfer transfer);

    final class Impl implements Notes {
        private static long root() {
            long r = Transaction.current().root();
            if (r == 0) {
                throw new IllegalStateException("notes not initialized");
            }
            return r;
        }

        @Override
        public void init() {
            Transaction tx = Transaction.current();
            tx.setRoot(tx.allocate(24));
        }

        @Override
        public void putText(String text) {
            Transaction tx = Transaction.current();
            byte[] b = text.getBytes(StandardCharsets.UTF_8);
            long old = tx.readLong(root());
            if (old != 0) {
                tx.free(old);
            }
            long block = tx.allocate(4L + b.length);
            tx.writeInt(block, b.length);
            tx.write(block + 4, b);
            tx.writeLong(root(), block);
        }

        @Override
        public String text() {
            Transaction tx = Transaction.current();
            long block = tx.readLong(root());
            return block == 0 ? null : new String(tx.read(block + 4, tx.readInt(block)), StandardCharsets.UTF_8);
        }

        @Override
        public void putValues(long[] values) {
            Transaction tx = Transaction.current();
            long old = tx.readLong(root() + 8);
            if (old != 0) {
                tx.free(old);
            }
            long block = tx.allocate(8L + 8L * values.length);
            tx.writeLong(block, values.length);
            for (int i = 0; i < values.length; i++) {
                tx.writeLong(block + 8 + 8L * i, values[i]);
            }
            tx.writeLong(root() + 8, block);
        }

        @Override
        public long[] values() {
            Transaction tx = Transaction.current();
            long block = tx.readLong(root() + 8);
            if (block == 0) {
                return null;
            }
            long[] out = new long[(int) tx.readLong(block)];
            for (int i = 0; i < out.length; i++) {
                out[i] = tx.readLong(block + 8 + 8L * i);
            }
            return out;
        }

        @Override
        public long apply(Transfer transfer) {
            Transaction tx = Transaction.current();
            long total = tx.readLong(root() + 16) + transfer.amount();
            tx.writeLong(root() + 16, total);
            return total;
        }
    }
}
