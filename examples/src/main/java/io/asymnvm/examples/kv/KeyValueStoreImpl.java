package io.asymnvm.examples.kv;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.structures.PersistentBTree;
import io.asymnvm.structures.PersistentHashMap;
import io.asymnvm.structures.PersistentMap;
import io.asymnvm.structures.codec.Codecs;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * {@link KeyValueStore} on a {@code String -> String} map opened by name: a {@link PersistentHashMap} or a
 * {@link PersistentBTree}. The handle is opened once, here, outside any transaction; it resolves (and on first use
 * creates) the named structure inside each transaction that uses it, so the store may be constructed before
 * frontend recovery runs. Deterministic, as persistent transactions must be.
 *
 * <p>Names belong to one frontend: the backend refuses a name another frontend created, and a name that holds
 * the other kind of structure is refused with both kinds in the message.
 */
public final class KeyValueStoreImpl implements KeyValueStore {
    private final StructureKind kind;
    private final PersistentMap<String, String> map;
    private final PersistentBTree<String, String> tree;

    public KeyValueStoreImpl(AsymNvm nvm, StructureKind kind, String name) {
        Objects.requireNonNull(nvm, "nvm");
        this.kind = Objects.requireNonNull(kind, "kind");
        if (kind == StructureKind.BTREE) {
            tree = PersistentBTree.open(nvm, name, Codecs.STRING, Codecs.STRING);
            map = tree;
        } else {
            tree = null;
            map = PersistentHashMap.open(nvm, name, Codecs.STRING, Codecs.STRING);
        }
    }

    public StructureKind kind() {
        return kind;
    }

    @Override
    public String put(String key, String value) {
        return map.put(key, value);
    }

    @Override
    public String delete(String key) {
        return map.remove(key);
    }

    @Override
    public void putAll(String[] keys, String[] values) {
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(values, "values");
        if (keys.length != values.length) {
            throw new IllegalArgumentException(keys.length + " keys but " + values.length + " values");
        }
        for (int i = 0; i < keys.length; i++) {
            map.put(keys[i], values[i]);
        }
    }

    @Override
    public String get(String key) {
        return map.get(key);
    }

    @Override
    public String[] getAll(String[] keys) {
        Objects.requireNonNull(keys, "keys");
        String[] values = new String[keys.length];
        for (int i = 0; i < keys.length; i++) {
            values[i] = map.get(keys[i]);
        }
        return values;
    }

    @Override
    public long size() {
        return map.size();
    }

    @Override
    public List<Map.Entry<String, String>> scan(String from, boolean fromInclusive, String to, int limit) {
        if (tree == null) {
            throw new UnsupportedOperationException("scan needs an ordered structure; this store is a "
                    + kind.displayName() + " (use a " + StructureKind.BTREE.displayName() + ")");
        }
        if (limit < 1 || limit > MAX_SCAN_LIMIT) {
            throw new IllegalArgumentException("scan limit " + limit + " outside [1, " + MAX_SCAN_LIMIT + "]");
        }
        return tree.range(from, fromInclusive, to, true, false, limit);
    }
}
