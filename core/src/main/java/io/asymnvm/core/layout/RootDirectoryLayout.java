package io.asymnvm.core.layout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * A frontend's directory of named roots, one block in its heap linked from its first slab's header. Updated only
 * inside transactions (through redo), in the same transaction that creates the structure it names, so a name
 * and its structure appear together or not at all. The backend's catalog index is rebuilt from these blocks.
 *
 * <pre>
 *   0 magic(8) "ROOTDIR1"
 *   8 count(4)
 *  12 capacity(4)
 *  16 entries: capacity x 64 bytes
 *
 * entry:
 *   0 type(4)  4 keyCodec(4)  8 valueCodec(4)  12 nameLength(4)
 *  16 address(8)
 *  24 name (UTF-8, up to 40 bytes)
 * </pre>
 */
public final class RootDirectoryLayout {
    public static final long MAGIC = 0x31524944544F4F52L; // "ROOTDIR1" little-endian
    public static final int MAGIC_OFFSET = 0;
    public static final int COUNT_OFFSET = 8;
    public static final int CAPACITY_OFFSET = 12;
    public static final int ENTRIES_OFFSET = 16;
    public static final int ENTRY_LENGTH = 64;
    public static final int TYPE_OFFSET = 0;
    public static final int KEY_CODEC_OFFSET = 4;
    public static final int VALUE_CODEC_OFFSET = 8;
    public static final int NAME_LENGTH_OFFSET = 12;
    public static final int ADDRESS_OFFSET = 16;
    public static final int NAME_OFFSET = 24;
    public static final int MAX_NAME_BYTES = 40;
    public static final int INITIAL_CAPACITY = 16;

    private RootDirectoryLayout() {
    }

    public static int blockLength(int capacity) {
        return ENTRIES_OFFSET + capacity * ENTRY_LENGTH;
    }

    public static long entryOffset(int index) {
        return ENTRIES_OFFSET + (long) index * ENTRY_LENGTH;
    }

    /** Validates a root name and returns its UTF-8 bytes. */
    public static byte[] checkName(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("root name must not be empty");
        }
        byte[] b = name.getBytes(StandardCharsets.UTF_8);
        if (b.length > MAX_NAME_BYTES) {
            throw new IllegalArgumentException("root name '" + name + "' is " + b.length + " bytes in UTF-8, limit "
                    + MAX_NAME_BYTES);
        }
        return b;
    }

    /** One decoded entry. */
    public record Entry(String name, int type, int keyCodec, int valueCodec, long address) {
    }

    public static byte[] encodeEntry(Entry e) {
        byte[] name = checkName(e.name());
        ByteBuffer b = ByteBuffer.allocate(ENTRY_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(TYPE_OFFSET, e.type());
        b.putInt(KEY_CODEC_OFFSET, e.keyCodec());
        b.putInt(VALUE_CODEC_OFFSET, e.valueCodec());
        b.putInt(NAME_LENGTH_OFFSET, name.length);
        b.putLong(ADDRESS_OFFSET, e.address());
        b.put(NAME_OFFSET, name);
        return b.array();
    }

    /** Decodes an entry; a name length outside [1, 40] means the block is not a directory (IllegalStateException). */
    public static Entry decodeEntry(byte[] entry) {
        ByteBuffer b = ByteBuffer.wrap(entry).order(ByteOrder.LITTLE_ENDIAN);
        int n = b.getInt(NAME_LENGTH_OFFSET);
        if (n < 1 || n > MAX_NAME_BYTES) {
            throw new IllegalStateException("root directory entry with name length " + n + " outside [1, "
                    + MAX_NAME_BYTES + "]");
        }
        return new Entry(new String(entry, NAME_OFFSET, n, StandardCharsets.UTF_8), b.getInt(TYPE_OFFSET),
                b.getInt(KEY_CODEC_OFFSET), b.getInt(VALUE_CODEC_OFFSET), b.getLong(ADDRESS_OFFSET));
    }
}
