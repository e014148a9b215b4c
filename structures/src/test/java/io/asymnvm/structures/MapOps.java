package io.asymnvm.structures;

import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.frontend.Transaction;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.structures.codec.KeyCodec;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Map operations as persistent transactions for the tests: every method takes the structure's root address and
 * opens whichever structure its header names, with the built-in key codec it names and {@link Codecs#STRING}
 * values. Keys are {@code Long} or {@code String}.
 */
public interface MapOps {
    @PersistentTransaction
    long create(StructureType type, int keyCodecId, String name);

    @PersistentTransaction
    String put(long root, Object key, String value);

    @PersistentTransaction
    String putIfAbsent(long root, Object key, String value);

    @PersistentTransaction
    String remove(long root, Object key);

    /** {@link #appendSuffix}: a deterministic update function. */
    @PersistentTransaction
    String compute(long root, Object key, String suffix);

    @PersistentTransaction
    void putAll(long root, Object[] keys, String[] values);

    /** B+tree bulk load of ascending keys. */
    @PersistentTransaction
    void appendSorted(long root, Object[] keys, String[] values);

    @PersistentTransaction(readOnly = true)
    String get(long root, Object key);

    @PersistentTransaction(readOnly = true)
    String[] getAll(long root, Object[] keys);

    @PersistentTransaction(readOnly = true)
    boolean containsKey(long root, Object key);

    @PersistentTransaction(readOnly = true)
    long size(long root);

    /** Every entry as {key, value} pairs (B+tree: ascending; hash map: bucket order). */
    @PersistentTransaction(readOnly = true)
    List<Object[]> entries(long root);

    /** B+tree only: up to {@code limit} entries of a range. */
    @PersistentTransaction(readOnly = true)
    List<Object[]> range(long root, Object from, boolean fromInclusive, Object to, boolean toInclusive,
                         boolean descending, int limit);

    /** B+tree only: {first, last, floor(k), ceiling(k), lower(k), higher(k)}. */
    @PersistentTransaction(readOnly = true)
    Object[] navigate(long root, Object key);

    /** Hash map only: entries of up to {@code maxBuckets} buckets from {@code fromBucket}, then the next bucket. */
    @PersistentTransaction(readOnly = true)
    Object[] scanBuckets(long root, long fromBucket, long maxBuckets);

    @PersistentTransaction(readOnly = true)
    void verify(long root);

    /** B+tree: its height; hash map: its bucket count. */
    @PersistentTransaction(readOnly = true)
    long shape(long root);

    /** The update {@link #compute} applies: append, and drop the entry once it grows past 60 characters. */
    static String appendSuffix(String old, String suffix) {
        if (old == null) {
            return suffix;
        }
        return old.length() + suffix.length() > 60 ? null : old + suffix;
    }

    /** Implementation on the structures. */
    final class Impl implements MapOps {
        @SuppressWarnings("unchecked")
        static PersistentMap<Object, String> open(long root) {
            Transaction tx = Transaction.current();
            StructureHeader h = StructureHeader.read(tx, root);
            KeyCodec<Object> keys = (KeyCodec<Object>) Codecs.builtin(h.keyCodecId());
            return h.type() == StructureType.BTREE
                    ? PersistentBTree.open(tx, root, keys, Codecs.STRING)
                    : PersistentHashMap.open(tx, root, keys, Codecs.STRING);
        }

        @SuppressWarnings("unchecked")
        private static PersistentBTree<Object, String> tree(long root) {
            return (PersistentBTree<Object, String>) open(root);
        }

        @Override
        public long create(StructureType type, int keyCodecId, String name) {
            Transaction tx = Transaction.current();
            KeyCodec<?> keys = Codecs.builtin(keyCodecId);
            return type == StructureType.BTREE
                    ? PersistentBTree.create(tx, name, keys, Codecs.STRING)
                    : PersistentHashMap.create(tx, name, keys, Codecs.STRING);
        }

        @Override
        public String put(long root, Object key, String value) {
            return open(root).put(key, value);
        }

        @Override
        public String putIfAbsent(long root, Object key, String value) {
            return open(root).putIfAbsent(key, value);
        }

        @Override
        public String remove(long root, Object key) {
            return open(root).remove(key);
        }

        @Override
        public String compute(long root, Object key, String suffix) {
            return open(root).compute(key, (k, old) -> appendSuffix(old, suffix));
        }

        @Override
        public void putAll(long root, Object[] keys, String[] values) {
            PersistentMap<Object, String> m = open(root);
            for (int i = 0; i < keys.length; i++) {
                m.put(keys[i], values[i]);
            }
        }

        @Override
        public void appendSorted(long root, Object[] keys, String[] values) {
            List<Map.Entry<Object, String>> entries = new ArrayList<>(keys.length);
            for (int i = 0; i < keys.length; i++) {
                entries.add(Map.entry(keys[i], values[i]));
            }
            tree(root).appendSorted(entries);
        }

        @Override
        public String get(long root, Object key) {
            return open(root).get(key);
        }

        @Override
        public String[] getAll(long root, Object[] keys) {
            PersistentMap<Object, String> m = open(root);
            String[] out = new String[keys.length];
            for (int i = 0; i < keys.length; i++) {
                out[i] = m.get(keys[i]);
            }
            return out;
        }

        @Override
        public boolean containsKey(long root, Object key) {
            return open(root).containsKey(key);
        }

        @Override
        public long size(long root) {
            return open(root).size();
        }

        @Override
        public List<Object[]> entries(long root) {
            List<Object[]> out = new ArrayList<>();
            open(root).forEach((k, v) -> out.add(new Object[] {k, v}));
            return out;
        }

        @Override
        public List<Object[]> range(long root, Object from, boolean fromInclusive, Object to, boolean toInclusive,
                                    boolean descending, int limit) {
            List<Object[]> out = new ArrayList<>();
            for (Map.Entry<Object, String> e : tree(root).range(from, fromInclusive, to, toInclusive, descending,
                    limit)) {
                out.add(new Object[] {e.getKey(), e.getValue()});
            }
            return out;
        }

        @Override
        public Object[] navigate(long root, Object key) {
            PersistentBTree<Object, String> t = tree(root);
            return new Object[] {t.firstKey(), t.lastKey(), t.floorKey(key), t.ceilingKey(key), t.lowerKey(key),
                t.higherKey(key)};
        }

        @SuppressWarnings("unchecked")
        @Override
        public Object[] scanBuckets(long root, long fromBucket, long maxBuckets) {
            List<Object[]> out = new ArrayList<>();
            long next = ((PersistentHashMap<Object, String>) open(root)).forEachInBuckets(fromBucket, maxBuckets,
                    (k, v) -> out.add(new Object[] {k, v}));
            return new Object[] {out, next};
        }

        @Override
        public void verify(long root) {
            open(root).verify();
        }

        @Override
        public long shape(long root) {
            PersistentMap<Object, String> m = open(root);
            return m instanceof PersistentBTree<Object, String> t ? t.height()
                    : ((PersistentHashMap<Object, String>) m).bucketCount();
        }
    }
}
