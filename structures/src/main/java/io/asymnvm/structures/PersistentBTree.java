package io.asymnvm.structures;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.Transaction;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.structures.codec.KeyCodec;
import io.asymnvm.structures.codec.ValueCodec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A persistent ordered map: a B+tree of 4 KiB page-aligned nodes in persistent memory
 * ({@link io.asymnvm.structures.layout.BTreeLayout}, {@link io.asymnvm.structures.layout.NodePageLayout}).
 *
 * <p>Keys are ordered by their encoding (unsigned lexicographic), which the key codec makes equal to
 * {@link KeyCodec#comparator()}. Keys and values are stored inline in the leaves; values above
 * {@value io.asymnvm.structures.layout.NodePageLayout#MAX_INLINE_VALUE} bytes live in their own block. Keys above
 * {@value io.asymnvm.structures.layout.NodePageLayout#MAX_KEY_LENGTH} encoded bytes and values above
 * {@value io.asymnvm.structures.layout.NodePageLayout#MAX_VALUE_LENGTH} are refused before any write. Splits,
 * merges and redistributions run inside the operation's transaction and touch O(height) nodes
 * ({@link BTreeCore}).
 *
 * <p>An instance holds only the root address and the codecs; every method except {@link #create} and
 * {@link #open} must run inside a {@link io.asymnvm.frontend.PersistentTransaction} method and uses
 * {@link Transaction#current()}. See {@link PersistentMap} for the rules on determinism and bad input.
 *
 * <p>Inner nodes should outlive leaves in the frontend page cache (DESIGN §3); the page cache has no priority
 * hint yet, so today they compete equally.
 *
 * @param <K> key type
 * @param <V> value type
 */
public final class PersistentBTree<K, V> extends AbstractPersistentMap<K, V> {
    /** Largest total of encoded keys and values one {@link #appendSorted} call accepts (bounded redo). */
    public static final int MAX_BULK_BYTES = 128 << 10;

    private PersistentBTree(String name, KeyCodec<K> keyCodec, ValueCodec<V> valueCodec) {
        super(StructureType.BTREE, name, keyCodec, valueCodec);
    }

    private PersistentBTree(long rootAddress, KeyCodec<K> keyCodec, ValueCodec<V> valueCodec) {
        super(StructureType.BTREE, rootAddress, keyCodec, valueCodec);
    }

    /**
     * Opens the B+tree named {@code name} on this frontend, creating it if absent (the name and the structure
     * are created in one transaction, see {@link AsymNvm#namedRoot}). The handle resolves its root inside each
     * transaction that uses it: the first such transaction creates the structure, as part of itself, if the name is
     * absent; so a handle may be opened before frontend recovery runs. Using a name that holds another type or
     * other codecs is refused naming both. A name another frontend owns is refused here.
     */
    public static <K, V> PersistentBTree<K, V> open(AsymNvm nvm, String name, KeyCodec<K> keyCodec,
                                            ValueCodec<V> valueCodec) {
        Codecs.register(keyCodec);
        Codecs.register(valueCodec);
        nvm.checkNameAvailable(name, StructureType.BTREE.id(), keyCodec.id(), valueCodec.id());
        return new PersistentBTree<>(name, keyCodec, valueCodec);
    }

    /**
     * Creates an empty B+tree in transaction {@code tx}; returns its root address. The name (1..96 UTF-8 bytes)
     * and the codec ids are recorded in the root header.
     */
    public static <K, V> long create(Transaction tx, String name, KeyCodec<K> keyCodec, ValueCodec<V> valueCodec) {
        long root = StructureHeader.create(tx, StructureType.BTREE, name, keyCodec, valueCodec);
        BTreeCore.initialize(new Session(tx), root);
        return root;
    }

    /**
     * The B+tree at {@code rootAddress}; an {@link IllegalArgumentException} naming both sides if the root holds
     * another type or was written with other codecs.
     */
    public static <K, V> PersistentBTree<K, V> open(Transaction tx, long rootAddress, KeyCodec<K> keyCodec,
                                                    ValueCodec<V> valueCodec) {
        PersistentBTree<K, V> tree = new PersistentBTree<>(rootAddress, keyCodec, valueCodec);
        tree.openRoot(new Session(tx));
        return tree;
    }

    @Override
    BTreeCore core() {
        Session s = Session.current();
        return new BTreeCore(s, openRoot(s));
    }

    /** The smallest key, or null when empty. */
    public K firstKey() {
        return decodeKey(core().firstKey());
    }

    /** The largest key, or null when empty. */
    public K lastKey() {
        return decodeKey(core().lastKey());
    }

    /** The greatest key at most {@code key}, or null. */
    public K floorKey(K key) {
        return seek(key, false, true);
    }

    /** The greatest key strictly below {@code key}, or null. */
    public K lowerKey(K key) {
        return seek(key, false, false);
    }

    /** The least key at least {@code key}, or null. */
    public K ceilingKey(K key) {
        return seek(key, true, true);
    }

    /** The least key strictly above {@code key}, or null. */
    public K higherKey(K key) {
        return seek(key, true, false);
    }

    private K seek(K key, boolean forward, boolean inclusive) {
        byte[] k = encodeKey(key);
        BTreeCore c = core();
        BTreeCore.Cursor cur = forward ? c.seekForward(k, inclusive) : c.seekBackward(k, inclusive);
        return cur.valid() ? decodeKey(cur.page.key(cur.index)) : null;
    }

    /**
     * Visits the entries between {@code from} and {@code to} (null = unbounded; each bound inclusive or not), in
     * ascending or descending key order, until the visitor returns false.
     */
    public void range(K from, boolean fromInclusive, K to, boolean toInclusive, boolean descending,
                      EntryVisitor<? super K, ? super V> visitor) {
        Objects.requireNonNull(visitor, "visitor");
        byte[] f = from == null ? null : encodeKey(from);
        byte[] t = to == null ? null : encodeKey(to);
        core().range(f, fromInclusive, t, toInclusive, descending,
                (k, v) -> visitor.visit(decodeKey(k), decodeValue(v)));
    }

    /** Like {@link #range(Object, boolean, Object, boolean, boolean, EntryVisitor)}, collecting up to {@code limit}. */
    public List<Map.Entry<K, V>> range(K from, boolean fromInclusive, K to, boolean toInclusive, boolean descending,
                                       int limit) {
        List<Map.Entry<K, V>> out = new ArrayList<>();
        if (limit <= 0) {
            return out;
        }
        range(from, fromInclusive, to, toInclusive, descending, (k, v) -> {
            out.add(Map.entry(k, v));
            return out.size() < limit;
        });
        return out;
    }

    @Override
    public void forEach(EntryVisitor<? super K, ? super V> visitor) {
        range(null, true, null, true, false, visitor);
    }

    /**
     * Bulk load: appends {@code entries}, whose keys must be strictly ascending and above every key already
     * stored, filling leaves to 90%. Much cheaper than single puts (each leaf is written once). One call must
     * fit one transaction: at most {@link #MAX_BULK_BYTES} of encoded keys and values, so load large sorted inputs
     * in consecutive transactions. Everything is checked before anything is written.
     */
    public void appendSorted(List<? extends Map.Entry<K, V>> entries) {
        Objects.requireNonNull(entries, "entries");
        List<byte[]> keys = new ArrayList<>(entries.size());
        List<byte[]> values = new ArrayList<>(entries.size());
        long bytes = 0;
        for (Map.Entry<K, V> e : entries) {
            Objects.requireNonNull(e, "entry");
            byte[] k = encodeKey(e.getKey());
            byte[] v = encodeValue(e.getValue());
            if (!keys.isEmpty() && Arrays.compareUnsigned(keys.get(keys.size() - 1), k) >= 0) {
                throw new IllegalArgumentException("appendSorted: key " + e.getKey() + " at index " + keys.size()
                        + " is not above the previous key");
            }
            bytes += k.length + v.length;
            if (bytes > MAX_BULK_BYTES) {
                throw new IllegalArgumentException("appendSorted: input exceeds " + MAX_BULK_BYTES
                        + " encoded bytes at index " + keys.size() + "; split it over several transactions");
            }
            keys.add(k);
            values.add(v);
        }
        if (keys.isEmpty()) {
            return;
        }
        BTreeCore c = core();
        byte[] last = c.lastKey();
        if (last != null && Arrays.compareUnsigned(last, keys.get(0)) >= 0) {
            throw new IllegalArgumentException("appendSorted: first key " + entries.get(0).getKey()
                    + " is not above the largest stored key " + decodeKey(last));
        }
        c.appendSorted(keys, values);
        c.flush();
    }

    @Override
    public void verify() {
        BTreeVerifier.verify(core(), keyCodec, valueCodec);
    }

    /** Number of levels (1 = a single leaf); for tests and tools. */
    public int height() {
        return core().height();
    }
}
