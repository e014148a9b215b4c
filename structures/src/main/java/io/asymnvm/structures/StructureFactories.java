package io.asymnvm.structures;

import io.asymnvm.frontend.Transaction;
import io.asymnvm.frontend.roots.StructureFactory;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.structures.codec.KeyCodec;
import io.asymnvm.structures.codec.ValueCodec;

/**
 * The {@link StructureFactory} services of this module (named roots create structures through them, also when a
 * frontend re-executes the creating transaction during recovery). Codecs are resolved by id with
 * {@link Codecs#byId}.
 */
public final class StructureFactories {
    private StructureFactories() {
    }

    private static KeyCodec<?> key(int id) {
        ValueCodec<?> c = Codecs.byId(id);
        if (!(c instanceof KeyCodec<?> k)) {
            throw new IllegalArgumentException("codec " + c.name() + "(" + id + ") cannot order keys");
        }
        return k;
    }

    /** Creates B+trees. */
    public static final class BTree implements StructureFactory {
        @Override
        public int type() {
            return StructureType.BTREE.id();
        }

        @Override
        public String typeName() {
            return StructureType.BTREE.displayName();
        }

        @Override
        public long create(Transaction tx, String name, int keyCodec, int valueCodec) {
            return PersistentBTree.create(tx, name, key(keyCodec), Codecs.byId(valueCodec));
        }
    }

    /** Creates hash maps. */
    public static final class HashMap implements StructureFactory {
        @Override
        public int type() {
            return StructureType.HASH_MAP.id();
        }

        @Override
        public String typeName() {
            return StructureType.HASH_MAP.displayName();
        }

        @Override
        public long create(Transaction tx, String name, int keyCodec, int valueCodec) {
            return PersistentHashMap.create(tx, name, key(keyCodec), Codecs.byId(valueCodec));
        }
    }
}
