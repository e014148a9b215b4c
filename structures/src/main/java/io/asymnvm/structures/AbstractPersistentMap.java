package io.asymnvm.structures;

import io.asymnvm.frontend.roots.RootDirectory;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.structures.codec.KeyCodec;
import io.asymnvm.structures.codec.ValueCodec;
import io.asymnvm.structures.layout.NodePageLayout;
import io.asymnvm.structures.layout.StructureHeaderLayout;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.function.BiFunction;

/**
 * What both structures share: the root address, the codecs, input validation and encoding before any write, and
 * opening the root block with its header checked on every operation (the check reads bytes the operation reads
 * anyway, so a stale accessor can never act on the wrong structure).
 */
abstract class AbstractPersistentMap<K, V> implements PersistentMap<K, V> {
    private final long rootAddress;
    private final String name;
    /** The name's UTF-8 bytes, compared in place with a cached root's header (null without a name). */
    private final byte[] nameBytes;
    /** The structure as corruption reports name it, made once (every operation names its session with it). */
    private final String description;
    /** Whether the value codec is a built-in one, which copies what it decodes: values are decoded in the page. */
    private final boolean valuesDecodedInPlace;
    /**
     * Whether the value codec is {@link Codecs#BYTES}, whose encoding is the array itself: a put then writes the
     * caller's array without the codec's defensive clone, and a previous value comes back as the array the core
     * returned, without a second copy (see {@link #encodeValueForWrite} and {@link #decodeOwnedValue}).
     */
    private final boolean valuesAreBytes;
    /** For a handle by name: the last resolved root, trusted only while its header still carries the name. */
    private volatile long cachedRoot;
    final KeyCodec<K> keyCodec;
    final ValueCodec<V> valueCodec;
    private final StructureType type;

    AbstractPersistentMap(StructureType type, long rootAddress, KeyCodec<K> keyCodec, ValueCodec<V> valueCodec) {
        this(type, rootAddress, null, keyCodec, valueCodec);
    }

    /** A handle by name: the root is resolved (and created if absent) inside each transaction that uses it. */
    AbstractPersistentMap(StructureType type, String name, KeyCodec<K> keyCodec, ValueCodec<V> valueCodec) {
        this(type, 0, Objects.requireNonNull(name, "name"), keyCodec, valueCodec);
    }

    private AbstractPersistentMap(StructureType type, long rootAddress, String name, KeyCodec<K> keyCodec,
                                  ValueCodec<V> valueCodec) {
        this.type = type;
        this.rootAddress = rootAddress;
        this.name = name;
        this.nameBytes = name == null ? null : name.getBytes(StandardCharsets.UTF_8);
        this.description = type.displayName() + (name == null ? " at " + rootAddress : " '" + name + "'");
        this.keyCodec = Objects.requireNonNull(keyCodec, "keyCodec");
        this.valueCodec = Objects.requireNonNull(valueCodec, "valueCodec");
        this.valuesDecodedInPlace = builtin(valueCodec);
        this.valuesAreBytes = valueCodec == Codecs.BYTES;
    }

    /** The root address; for a handle opened by name, resolved in the running transaction. */
    @Override
    public long rootAddress() {
        return name == null ? rootAddress
                : RootDirectory.resolve(name, type.id(), keyCodec.id(), valueCodec.id());
    }

    public KeyCodec<K> keyCodec() {
        return keyCodec;
    }

    public ValueCodec<V> valueCodec() {
        return valueCodec;
    }

    /** A session on the current transaction with the root block loaded and its header checked. */
    final Block openRoot(Session session) {
        session.describe(describe());
        long cached = cachedRoot;
        if (name != null && cached != 0) {
            Block shared = sharedRoot(session, cached);
            if (shared != null) {
                return shared;
            }
            // read the block straight from the transaction, kept by the session only once its header carries the
            // name: if the cached root is stale, resolving may create the structure at this very address within
            // this transaction, and the session must not hold the stale bytes then
            byte[] block = session.tx.read(cached, StructureHeaderLayout.ROOT_BLOCK_LENGTH);
            if (carriesName(block, cached)) {
                Block root = session.adopt(cached, block);
                StructureHeader.check(root.bytesFromZero(), cached, type, keyCodec, valueCodec);
                return root;
            }
            cachedRoot = 0; // created by a transaction that aborted, or reused: resolve again
        }
        long address = rootAddress();
        Block root = session.load(address, StructureHeaderLayout.ROOT_BLOCK_LENGTH);
        byte[] image = root.bytesFromZero();
        if (name != null) {
            // the root directory led here: a missing header is damage, not a wrong address passed by the caller
            try {
                StructureHeaderLayout.checkHeader(image, address);
            } catch (IllegalArgumentException damaged) {
                throw new StructureCorruptException(session.structure(), address, "root block header",
                        "magic 0x" + Long.toHexString(StructureHeaderLayout.MAGIC) + " and format version "
                                + StructureHeaderLayout.FORMAT_VERSION, "magic 0x"
                                + Long.toHexString(StructureHeaderLayout.magic(image)) + " and format version "
                                + StructureHeaderLayout.formatVersion(image), damaged);
            }
        }
        StructureHeader.check(image, address, type, keyCodec, valueCodec);
        if (name != null) {
            cachedRoot = address;
        }
        return root;
    }

    /**
     * The cached root read without a copy (issue 8 goal 1: every operation opens its root): the page holding it,
     * shared by the transaction, if the block lies inside one page and its header there carries this handle's
     * name, type and codecs (compared in place); else null, and {@link #openRoot} reads it the checking way,
     * which also reports what does not match.
     */
    private Block sharedRoot(Session session, long cached) {
        int inPage = (int) (cached % NodePageLayout.NODE_SIZE);
        if (inPage > NodePageLayout.NODE_SIZE - StructureHeaderLayout.ROOT_BLOCK_LENGTH) {
            return null;
        }
        byte[] page;
        try {
            page = session.tx.readShared(cached - inPage, NodePageLayout.NODE_SIZE);
        } catch (IllegalArgumentException outside) {
            return null; // the page reaches past the heap's end: the checking way reads only the block
        }
        if (page.length != NodePageLayout.NODE_SIZE || !StructureHeaderLayout.describes(page, inPage, nameBytes,
                type.id(), keyCodec.id(), valueCodec.id())) {
            return null;
        }
        return session.adoptSlice(cached, page, inPage, StructureHeaderLayout.ROOT_BLOCK_LENGTH);
    }

    /**
     * Whether {@code block} is the header of a structure of a known type named {@link #name}: compared in place,
     * without decoding the header (this runs on every operation of a handle opened by name).
     */
    private static boolean builtin(ValueCodec<?> codec) {
        try {
            return Codecs.builtin(codec.id()) == codec;
        } catch (IllegalArgumentException notBuiltin) {
            return false;
        }
    }

    private boolean carriesName(byte[] block, long address) {
        if (!StructureHeaderLayout.hasName(block, nameBytes)) {
            return false;
        }
        try {
            StructureType.fromId(StructureHeaderLayout.type(block));
            return true;
        } catch (IllegalArgumentException unknownType) {
            return false;
        }
    }

    /** The structure's algorithms on a session of the current transaction, root opened and checked. */
    abstract MapCore core();

    /** The structure as corruption reports name it. */
    private String describe() {
        return description;
    }

    @Override
    public V get(K key) {
        byte[] k = encodeKey(key);
        return valuesDecodedInPlace ? core().get(k, valueCodec) : decodeValue(core().get(k));
    }

    @Override
    public boolean containsKey(K key) {
        return core().get(encodeKey(key)) != null;
    }

    @Override
    public V put(K key, V value) {
        return put(key, value, false);
    }

    @Override
    public V putIfAbsent(K key, V value) {
        return put(key, value, true);
    }

    private V put(K key, V value, boolean onlyIfAbsent) {
        byte[] k = encodeKey(key);
        byte[] v = encodeValueForWrite(value);
        MapCore c = core();
        V old = decodeOwnedValue(c.put(k, v, onlyIfAbsent));
        c.flush();
        return old;
    }

    @Override
    public V remove(K key) {
        byte[] k = encodeKey(key);
        MapCore c = core();
        V old = decodeOwnedValue(c.remove(k));
        c.flush();
        return old;
    }

    @Override
    public V compute(K key, BiFunction<? super K, ? super V, ? extends V> function) {
        byte[] k = encodeKey(key);
        Objects.requireNonNull(function, "function");
        MapCore c = core();
        byte[] current = c.get(k);
        V next = function.apply(key, decodeValue(current));
        if (next == null) {
            if (current != null) {
                c.remove(k);
            }
        } else {
            c.put(k, encodeValue(next), false);
        }
        c.flush();
        return next;
    }

    @Override
    public long size() {
        return core().size();
    }

    final byte[] encodeKey(K key) {
        Objects.requireNonNull(key, "key");
        byte[] k = keyCodec.encode(key);
        Records.checkKey(k);
        return k;
    }

    final byte[] encodeValue(V value) {
        Objects.requireNonNull(value, "value");
        byte[] v = valueCodec.encode(value);
        Records.checkValue(v);
        return v;
    }

    /**
     * The encoding of {@code value} for a {@link MapCore#put}, which only copies the bytes into records and pages
     * (issue 8: one copy of a value less per put): for {@link Codecs#BYTES} the array itself, else
     * {@link #encodeValue}. The caller's array is not changed and no reference to it outlives the operation.
     */
    private byte[] encodeValueForWrite(V value) {
        if (!valuesAreBytes) {
            return encodeValue(value);
        }
        byte[] v = (byte[]) Objects.requireNonNull(value, "value");
        Records.checkValue(v);
        return v;
    }

    /**
     * A previous value returned by {@link MapCore#put} or {@link MapCore#remove}, a fresh array no one else
     * holds ({@link Records#value}): for {@link Codecs#BYTES} returned as it is, else decoded.
     */
    @SuppressWarnings("unchecked")
    private V decodeOwnedValue(byte[] v) {
        return valuesAreBytes ? (V) v : decodeValue(v);
    }

    final V decodeValue(byte[] v) {
        return v == null ? null : valueCodec.decode(v, 0, v.length);
    }

    final K decodeKey(byte[] k) {
        return k == null ? null : keyCodec.decode(k, 0, k.length);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "@" + (name == null ? String.valueOf(rootAddress) : "'" + name + "'")
                + "(" + keyCodec.name() + " -> " + valueCodec.name()
                + ")";
    }
}
