package io.asymnvm.frontend.roots;

import io.asymnvm.frontend.Transaction;

/** A test structure: one long, tagged with its type in the first word. */
public final class CounterFactory implements StructureFactory {
    public static final int TYPE = 99;

    @Override
    public int type() {
        return TYPE;
    }

    @Override
    public String typeName() {
        return "counter";
    }

    @Override
    public long create(Transaction tx, String name, int keyCodec, int valueCodec) {
        long block = tx.allocate(16);
        tx.writeLong(block, TYPE);
        return block;
    }
}
