package io.asymnvm.structures;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.Transaction;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.structures.codec.KeyCodec;
import io.asymnvm.structures.codec.ValueCodec;

import java.util.Objects;

/**
 * A persistent hash map: linear hashing over chains of 4 KiB bucket pages
 * ({@link io.asymnvm.structures.layout.HashMapLayout}).
 *
 * <p><b>Growth is incremental.</b> The map never rehashes everything at once: whenever an insert pushes the
 * average bucket fill above 3/4 of a page, that same operation splits exactly one bucket (the next one in linear
 * order) into two, so every operation writes a bounded number of bytes (a bucket chain or two) however large the
 * map is, and growth is atomic with the insert that triggered it: a crash never exposes a half-grown table
 * ({@link HashCore}). The table does not shrink; emptied overflow pages are freed. Growth stops at
 * {@link io.asymnvm.structures.layout.HashMapLayout#MAX_BUCKETS} buckets (about 800 MB of entries); beyond that
 * the map stays correct but bucket chains, and so operation costs, grow.
 *
 * <p>Keys are compared and hashed as their encoded bytes, so the key codec must give equal keys equal
 * encodings. Limits, determinism and bad-input rules as in {@link PersistentMap}. An instance holds only the root
 * address and the codecs; every method except {@link #create} and {@link #open} must run inside a
 * {@link io.asymnvm.frontend.PersistentTransaction} method.
 *
 * @param <K> key type
 * @param <V> value type
 */
public final class PersistentHashMap<K, V> extends AbstractPersistentMap<K, V> {

    private PersistentHashMap(String name, KeyCodec<K> keyCodec, ValueCodec<V> valueCodec) {
        super(StructureType.HASH_MAP, name, keyCodec, valueCodec);
    }

    private PersistentHashMap(long rootAddress, KeyCodec<K> keyCodec, ValueCodec<V> valueCodec) {
        super(StructureType.HASH_MAP, rootAddress, keyCodec, valueCodec);
    }

    /**
     * Opens the hash map named {@code name} on this frontend, creating it if absent (the name and the structure
     * are created in one transaction, see {@link AsymNvm#namedRoot}). The handle resolves its root inside each
     * transaction that uses it: the first such transaction creates the structure, as part of itself, if the name is
     * absent; so a handle may be opened before frontend recovery runs. Using a name that holds another type or
     * other codecs is refused naming both. A name another frontend owns is refused here.
     */
    public static <K, V> PersistentHashMap<K, V> open(AsymNvm nvm, String name, KeyCodec<K> keyCodec,
                                            ValueCodec<V> valueCodec) {
        Codecs.register(keyCodec);
        Codecs.register(valueCodec);
        nvm.checkNameAvailable(name, StructureType.HASH_MAP.id(), keyCodec.id(), valueCodec.id());
        return new PersistentHashMap<>(name, keyCodec, valueCodec);
    }

    /** Creates an empty hash map in transaction {@code tx}; returns its root address. */
    public static <K, V> long create(Transaction tx, String name, KeyCodec<K> keyCodec, ValueCodec<V> valueCodec) {
        long root = StructureHeader.create(tx, StructureType.HASH_MAP, name, keyCodec, valueCodec);
        HashCore.initialize(new Session(tx), root);
        return root;
    }

    /**
     * The hash map at {@code rootAddress}; an {@link IllegalArgumentException} naming both sides if the root holds
     * another type or was written with other codecs.
     */
    public static <K, V> PersistentHashMap<K, V> open(Transaction tx, long rootAddress, KeyCodec<K> keyCodec,
                                                      ValueCodec<V> valueCodec) {
        PersistentHashMap<K, V> map = new PersistentHashMap<>(rootAddress, keyCodec, valueCodec);
        map.openRoot(new Session(tx));
        return map;
    }

    @Override
    HashCore core() {
        Session s = Session.current();
        return new HashCore(s, openRoot(s));
    }

    @Override
    public void forEach(EntryVisitor<? super K, ? super V> visitor) {
        Objects.requireNonNull(visitor, "visitor");
        core().visitBuckets(0, Long.MAX_VALUE, (k, v) -> visitor.visit(decodeKey(k), decodeValue(v)));
    }

    /**
     * Chunked iteration for maps too large for one transaction: visits buckets {@code fromBucket ..
     * fromBucket + maxBuckets - 1} and returns the bucket to continue from in the next transaction, or -1 when
     * done. Buckets only ever split into higher-numbered buckets, so a scan interleaved with inserts still sees
     * every entry that was present throughout (an entry moved by a split behind the cursor may be seen twice).
     */
    public long forEachInBuckets(long fromBucket, long maxBuckets, EntryVisitor<? super K, ? super V> visitor) {
        Objects.requireNonNull(visitor, "visitor");
        if (fromBucket < 0 || maxBuckets <= 0) {
            throw new IllegalArgumentException("bucket range from " + fromBucket + " count " + maxBuckets);
        }
        return core().visitBuckets(fromBucket, maxBuckets, (k, v) -> visitor.visit(decodeKey(k), decodeValue(v)));
    }

    /** Number of buckets (grows one at a time); for tests and tools. */
    public long bucketCount() {
        return core().bucketCount();
    }

    @Override
    public void verify() {
        HashVerifier.verify(core(), keyCodec, valueCodec);
    }
}
