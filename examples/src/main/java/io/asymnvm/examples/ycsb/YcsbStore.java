package io.asymnvm.examples.ycsb;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.structures.PersistentBTree;
import io.asymnvm.structures.PersistentHashMap;
import io.asymnvm.structures.PersistentMap;
import io.asymnvm.structures.codec.Codecs;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * YCSB's table as persistent transactions over one named map of key → {@link YcsbRecord}: each YCSB operation
 * is one transaction (an update reads the record, overlays the fields and writes it back, atomically).
 */
public interface YcsbStore {

    /** Inserts or replaces the record; false if the key existed (YCSB inserts fresh keys). */
    @PersistentTransaction
    boolean insert(String key, byte[] record);

    /** The encoded record, or null. */
    @PersistentTransaction(readOnly = true)
    byte[] read(String key);

    /** Overlays {@code fields} (an encoded record) on the stored record; false if the key is absent. */
    @PersistentTransaction
    boolean update(String key, byte[] fields);

    @PersistentTransaction
    boolean delete(String key);

    /** Up to {@code count} records from {@code startKey} on, in key order (B+tree only). */
    @PersistentTransaction(readOnly = true)
    List<Map.Entry<String, byte[]>> scan(String startKey, int count);

    /** The implementation over a hash map or a B+tree opened by name. */
    final class Impl implements YcsbStore {
        private final PersistentMap<String, byte[]> map;
        private final PersistentBTree<String, byte[]> tree;

        public Impl(AsymNvm nvm, boolean btree, String name) {
            if (btree) {
                tree = PersistentBTree.open(nvm, name, Codecs.STRING, Codecs.BYTES);
                map = tree;
            } else {
                tree = null;
                map = PersistentHashMap.open(nvm, name, Codecs.STRING, Codecs.BYTES);
            }
        }

        @Override
        public boolean insert(String key, byte[] record) {
            return map.put(key, record) == null;
        }

        @Override
        public byte[] read(String key) {
            return map.get(key);
        }

        @Override
        public boolean update(String key, byte[] fields) {
            byte[] old = map.get(key);
            if (old == null) {
                return false;
            }
            Map<String, byte[]> merged = YcsbRecord.decode(old);
            merged.putAll(YcsbRecord.decode(fields));
            map.put(key, YcsbRecord.encode(merged));
            return true;
        }

        @Override
        public boolean delete(String key) {
            return map.remove(key) != null;
        }

        @Override
        public List<Map.Entry<String, byte[]>> scan(String startKey, int count) {
            if (tree == null) {
                throw new UnsupportedOperationException("scan needs the B+tree (asymnvm.structure=btree)");
            }
            return new ArrayList<>(tree.range(startKey, true, null, false, false, count));
        }
    }
}
