package io.asymnvm.structures.layout;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The root block of every persistent structure: a self-describing header (so that a catalog can verify, or
 * rebuild itself from, what a root address holds) followed by the structure's own root fields. The root block is
 * one allocator block of {@link #ROOT_BLOCK_LENGTH} bytes; the header never changes after creation.
 *
 * <pre>
 *   0 magic(8)           "ASYMSTR1" (little-endian long {@link #MAGIC})
 *   8 formatVersion(4)   {@link #FORMAT_VERSION}
 *  12 type(4)            structure type id (1 = B+tree, 2 = hash map)
 *  16 keyCodecId(4)
 *  20 valueCodecId(4)
 *  24 nameLength(4)      bytes of the UTF-8 name, 1..{@link #MAX_NAME_LENGTH}
 *  28 reserved(4)
 *  32 name(96)           UTF-8, zero-padded
 * 128 structure fields   (BTreeLayout / HashMapLayout), up to 256
 * </pre>
 */
public final class StructureHeaderLayout {
    public static final long MAGIC = 0x315254534D595341L; // "ASYMSTR1" read as a little-endian long
    public static final int FORMAT_VERSION = 1;
    public static final int MAGIC_OFFSET = 0;
    public static final int FORMAT_VERSION_OFFSET = 8;
    public static final int TYPE_OFFSET = 12;
    public static final int KEY_CODEC_OFFSET = 16;
    public static final int VALUE_CODEC_OFFSET = 20;
    public static final int NAME_LENGTH_OFFSET = 24;
    public static final int NAME_OFFSET = 32;
    public static final int MAX_NAME_LENGTH = 96;
    public static final int HEADER_LENGTH = 128;
    /** Bytes of the root block: header plus the structure's root fields. */
    public static final int ROOT_BLOCK_LENGTH = 256;

    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    private StructureHeaderLayout() {
    }

    /** The UTF-8 bytes of a structure name, or an {@link IllegalArgumentException} naming the limit. */
    public static byte[] checkName(String name) {
        if (name == null) {
            throw new NullPointerException("structure name");
        }
        byte[] b = name.getBytes(StandardCharsets.UTF_8);
        if (b.length == 0 || b.length > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("structure name of " + b.length + " UTF-8 bytes outside [1, "
                    + MAX_NAME_LENGTH + "]: \"" + name + "\"");
        }
        return b;
    }

    /** Fills the header of a fresh root block image of {@link #ROOT_BLOCK_LENGTH} bytes. */
    public static void encode(byte[] block, int type, int keyCodecId, int valueCodecId, byte[] utf8Name) {
        LONG.set(block, MAGIC_OFFSET, MAGIC);
        INT.set(block, FORMAT_VERSION_OFFSET, FORMAT_VERSION);
        INT.set(block, TYPE_OFFSET, type);
        INT.set(block, KEY_CODEC_OFFSET, keyCodecId);
        INT.set(block, VALUE_CODEC_OFFSET, valueCodecId);
        INT.set(block, NAME_LENGTH_OFFSET, utf8Name.length);
        System.arraycopy(utf8Name, 0, block, NAME_OFFSET, utf8Name.length);
    }

    public static long magic(byte[] block) {
        return (long) LONG.get(block, MAGIC_OFFSET);
    }

    public static int formatVersion(byte[] block) {
        return (int) INT.get(block, FORMAT_VERSION_OFFSET);
    }

    public static int type(byte[] block) {
        return (int) INT.get(block, TYPE_OFFSET);
    }

    public static int keyCodecId(byte[] block) {
        return (int) INT.get(block, KEY_CODEC_OFFSET);
    }

    public static int valueCodecId(byte[] block) {
        return (int) INT.get(block, VALUE_CODEC_OFFSET);
    }

    /** The stored name; an {@link IllegalArgumentException} if its length field is out of range. */
    public static String name(byte[] block) {
        int n = (int) INT.get(block, NAME_LENGTH_OFFSET);
        if (n < 1 || n > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("structure header name length " + n + " outside [1, "
                    + MAX_NAME_LENGTH + "]");
        }
        return new String(block, NAME_OFFSET, n, StandardCharsets.UTF_8);
    }

    /**
     * Whether {@code block} carries a header (magic and format version) whose name is {@code utf8Name}, compared
     * byte for byte in place: no exception and no allocation, whatever the block holds.
     */
    public static boolean hasName(byte[] block, byte[] utf8Name) {
        if (magic(block) != MAGIC || formatVersion(block) != FORMAT_VERSION) {
            return false;
        }
        int n = (int) INT.get(block, NAME_LENGTH_OFFSET);
        return n == utf8Name.length && n <= MAX_NAME_LENGTH
                && Arrays.equals(block, NAME_OFFSET, NAME_OFFSET + n, utf8Name, 0, n);
    }

    /**
     * Whether the root block at {@code base} of {@code page} carries a header (magic and format version) named
     * {@code utf8Name} of structure type {@code type} with these codec ids: compared in place, no exception and no
     * allocation, whatever the page holds (a handle's check of its cached root on every operation).
     */
    public static boolean describes(byte[] page, int base, byte[] utf8Name, int type, int keyCodecId,
                                    int valueCodecId) {
        if (base < 0 || base > page.length - ROOT_BLOCK_LENGTH
                || (long) LONG.get(page, base + MAGIC_OFFSET) != MAGIC
                || (int) INT.get(page, base + FORMAT_VERSION_OFFSET) != FORMAT_VERSION
                || (int) INT.get(page, base + TYPE_OFFSET) != type
                || (int) INT.get(page, base + KEY_CODEC_OFFSET) != keyCodecId
                || (int) INT.get(page, base + VALUE_CODEC_OFFSET) != valueCodecId) {
            return false;
        }
        int n = (int) INT.get(page, base + NAME_LENGTH_OFFSET);
        return n == utf8Name.length && n <= MAX_NAME_LENGTH
                && Arrays.equals(page, base + NAME_OFFSET, base + NAME_OFFSET + n, utf8Name, 0, n);
    }

    /**
     * Checks magic and format version of a root block image read from {@code address}; an
     * {@link IllegalArgumentException} naming the address and both values otherwise.
     */
    public static void checkHeader(byte[] block, long address) {
        long m = magic(block);
        if (m != MAGIC) {
            throw new IllegalArgumentException("no persistent structure at address " + address + ": magic 0x"
                    + Long.toHexString(m) + ", expected 0x" + Long.toHexString(MAGIC));
        }
        int v = formatVersion(block);
        if (v != FORMAT_VERSION) {
            throw new IllegalArgumentException("structure at address " + address + " has format version " + v
                    + ", this library reads version " + FORMAT_VERSION);
        }
    }
}
