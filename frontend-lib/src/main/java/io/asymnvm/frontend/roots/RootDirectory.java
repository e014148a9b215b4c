package io.asymnvm.frontend.roots;

import io.asymnvm.core.layout.RootDirectoryLayout;
import io.asymnvm.frontend.Transaction;
import io.asymnvm.frontend.tx.TransactionContext;

import java.util.Map;
import java.util.Objects;

/**
 * {@link NamedRoots} implementation over the frontend's root directory block ({@link RootDirectoryLayout}), linked
 * from its first slab's header. The directory doubles in a transaction when full.
 */
public final class RootDirectory implements NamedRoots {
    private static volatile Map<Integer, StructureFactory> services;

    private final Map<Integer, StructureFactory> factories;

    public RootDirectory(Map<Integer, StructureFactory> factories) {
        this.factories = Map.copyOf(factories);
    }

    /** The structure factories on the class path ({@link java.util.ServiceLoader}), loaded once. */
    public static Map<Integer, StructureFactory> factories() {
        Map<Integer, StructureFactory> f = services;
        if (f == null) {
            Map<Integer, StructureFactory> found = new java.util.HashMap<>();
            for (StructureFactory factory : java.util.ServiceLoader.load(StructureFactory.class)) {
                found.put(factory.type(), factory);
            }
            f = Map.copyOf(found);
            services = f;
        }
        return f;
    }

    /**
     * Inside the running transaction: the root address of {@code name}, created (with its directory entry) as part
     * of that transaction if absent. Lets a structure handle opened by name resolve lazily, so that opening handles
     * needs no transaction of its own (and no recovery ordering), and a structure created by a user's transaction
     * is re-created when that transaction is re-executed.
     */
    public static long resolve(String name, int type, int keyCodec, int valueCodec) {
        RootDirectory d = shared;
        if (d == null) {
            d = new RootDirectory(factories());
            shared = d;
        }
        return d.openOrCreate(name, type, keyCodec, valueCodec);
    }

    private static volatile RootDirectory shared;

    @Override
    public long openOrCreate(String name, int type, int keyCodec, int valueCodec) {
        RootDirectoryLayout.checkName(name);
        TransactionContext tx = TransactionContext.current();
        RootDirectoryLayout.Entry found = find(name);
        if (found != null) {
            if (found.type() != type || found.keyCodec() != keyCodec || found.valueCodec() != valueCodec) {
                throw new IllegalArgumentException("root '" + name + "' is a " + describe(found.type(),
                        found.keyCodec(), found.valueCodec()) + "; opened as a " + describe(type, keyCodec,
                        valueCodec));
            }
            return found.address();
        }
        StructureFactory factory = factories.get(type);
        if (factory == null) {
            throw new IllegalStateException("no structure factory for type " + type + " on the class path (known: "
                    + factories.keySet() + ")");
        }
        long address = factory.create(tx, name, keyCodec, valueCodec);
        tx.noteNamedRootCreated();
        long dir = tx.directory();
        if (dir == 0) {
            dir = newDirectory(tx, RootDirectoryLayout.INITIAL_CAPACITY);
            tx.setDirectory(dir);
        }
        int count = tx.readInt(dir + RootDirectoryLayout.COUNT_OFFSET);
        int capacity = tx.readInt(dir + RootDirectoryLayout.CAPACITY_OFFSET);
        if (count == capacity) {
            long bigger = newDirectory(tx, capacity * 2);
            byte[] entries = tx.read(dir + RootDirectoryLayout.ENTRIES_OFFSET, count * RootDirectoryLayout.ENTRY_LENGTH);
            tx.write(bigger + RootDirectoryLayout.ENTRIES_OFFSET, entries);
            tx.free(dir);
            dir = bigger;
            tx.setDirectory(dir);
        }
        tx.write(dir + RootDirectoryLayout.entryOffset(count), RootDirectoryLayout.encodeEntry(
                new RootDirectoryLayout.Entry(name, type, keyCodec, valueCodec, address)));
        tx.writeInt(dir + RootDirectoryLayout.COUNT_OFFSET, count + 1);
        return address;
    }

    @Override
    public RootDirectoryLayout.Entry find(String name) {
        Objects.requireNonNull(name, "name");
        TransactionContext tx = TransactionContext.current();
        long dir = tx.directory();
        if (dir == 0) {
            return null;
        }
        int count = tx.readInt(dir + RootDirectoryLayout.COUNT_OFFSET);
        for (int i = 0; i < count; i++) {
            RootDirectoryLayout.Entry e = RootDirectoryLayout.decodeEntry(
                    tx.read(dir + RootDirectoryLayout.entryOffset(i), RootDirectoryLayout.ENTRY_LENGTH));
            if (e.name().equals(name)) {
                return e;
            }
        }
        return null;
    }

    private static long newDirectory(Transaction tx, int capacity) {
        long dir = tx.allocate(RootDirectoryLayout.blockLength(capacity));
        tx.writeLong(dir + RootDirectoryLayout.MAGIC_OFFSET, RootDirectoryLayout.MAGIC);
        tx.writeInt(dir + RootDirectoryLayout.COUNT_OFFSET, 0);
        tx.writeInt(dir + RootDirectoryLayout.CAPACITY_OFFSET, capacity);
        return dir;
    }

    private String describe(int type, int keyCodec, int valueCodec) {
        StructureFactory f = factories.get(type);
        return (f == null ? "type " + type : f.typeName()) + " with key codec " + keyCodec + " and value codec "
                + valueCodec;
    }
}
