package io.asymnvm.frontend;

import java.util.List;

/**
 * Transactions whose argument is declared {@code Object}, so that what a semantic record may name is decided by
 * the frontend's argument allow-list alone. Root block as {@link Cells}: count(8) | cells(8 x count).
 */
public interface Shelf {
    /** What a shelf stores: its weight goes into a cell. */
    interface Item {
        long weight();
    }

    record Label(String text) implements Item {
        public long weight() {
            return text.length();
        }
    }

    record Weight(long grams) implements Item {
        public long weight() {
            return grams;
        }
    }

    /** A record whose field holds a collection: its runtime class must be allowed too. */
    record Crate(String name, List<Long> parts) implements Item {
        public long weight() {
            return parts.stream().mapToLong(Long::longValue).sum();
        }
    }

    @PersistentTransaction
    void create(int count);

    @PersistentTransaction
    void put(int slot, Object item);

    @PersistentTransaction(readOnly = true)
    long[] snapshot();

    final class Impl implements Shelf {
        private final Cells.Impl cells = new Cells.Impl();

        @Override
        public void create(int count) {
            cells.create(count);
        }

        @Override
        public void put(int slot, Object item) {
            cells.set(slot, ((Item) item).weight());
        }

        @Override
        public long[] snapshot() {
            return cells.snapshot();
        }
    }
}
