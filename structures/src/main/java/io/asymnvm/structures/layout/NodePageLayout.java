package io.asymnvm.structures.layout;

import io.asymnvm.structures.StructureCorruptException;

/**
 * A node page: one page-aligned {@link #NODE_SIZE}-byte node holding variable-length records through a slot
 * array (B+tree leaves and inner nodes, hash-map bucket pages). Slots are kept in ascending order of the record
 * keys (unsigned lexicographic order of the encoded key bytes); records are packed from the end of the page
 * downwards, so inserting a record writes the record, the shifted slots and the header, never the whole page.
 *
 * <pre>
 *    0 kind(1)        'L' leaf, 'I' inner, 'B' bucket page, 'F' free (on the pool's free list)
 *    1 level(1)       B+tree: 0 for leaves, height above the leaves for inner nodes; 0 otherwise
 *    2 count(2)       number of records (unsigned)
 *    4 heapStart(2)   page offset of the lowest record byte (NODE_SIZE when empty; unsigned)
 *    6 garbage(2)     bytes of dead records between heapStart and the end (reclaimed by compaction)
 *    8 link0(8)       leaf: next leaf | inner: leftmost child | bucket: next page of the chain | free: next free
 *   16 link1(8)       leaf: previous leaf | otherwise 0
 *   24 slot[count](2) page offsets of the records, in key order
 *      ... free space ...
 *   heapStart .. NODE_SIZE: records
 *
 * record:  keyLength(2) | tag(2) | key[keyLength] | payload
 *   tag 0..{@value #MAX_INLINE_TAG}: payload is that many bytes inline (leaf / bucket value, inner: 8-byte child)
 *   tag {@value #TAG_BLOB}:          payload is a blob reference: valueLength(4) | blobAddress(8), the value
 *                                    bytes living in their own allocator block
 * </pre>
 *
 * Limits: keys up to {@link #MAX_KEY_LENGTH} bytes, inline values up to {@link #MAX_INLINE_VALUE} bytes, so that
 * a record takes at most a third of a node's capacity and a split of a full node always yields two valid nodes.
 */
public final class NodePageLayout {
    public static final int NODE_SIZE = 4096;
    public static final int KIND_OFFSET = 0;
    public static final int LEVEL_OFFSET = 1;
    public static final int COUNT_OFFSET = 2;
    public static final int HEAP_START_OFFSET = 4;
    public static final int GARBAGE_OFFSET = 6;
    public static final int LINK0_OFFSET = 8;
    public static final int LINK1_OFFSET = 16;
    public static final int HEADER_LENGTH = 24;
    public static final int SLOT_LENGTH = 2;
    /** Bytes available to slots and records. */
    public static final int CAPACITY = NODE_SIZE - HEADER_LENGTH;

    public static final byte KIND_LEAF = 'L';
    public static final byte KIND_INNER = 'I';
    public static final byte KIND_BUCKET = 'B';
    public static final byte KIND_FREE = 'F';

    public static final int RECORD_KEY_LENGTH_OFFSET = 0;
    public static final int RECORD_TAG_OFFSET = 2;
    public static final int RECORD_HEADER_LENGTH = 4;
    public static final int MAX_INLINE_TAG = 0x7FFF;
    public static final int TAG_BLOB = 0xFFFF;
    public static final int BLOB_LENGTH_OFFSET = 0;
    public static final int BLOB_ADDRESS_OFFSET = 4;
    public static final int BLOB_REFERENCE_LENGTH = 12;
    public static final int CHILD_LENGTH = 8;

    public static final int MAX_KEY_LENGTH = 1024;
    public static final int MAX_INLINE_VALUE = 256;
    /** Largest value (stored out of line beyond {@link #MAX_INLINE_VALUE}); bounded by one transaction's redo. */
    public static final int MAX_VALUE_LENGTH = 64 << 10;
    /** Largest record plus its slot: at most a third of {@link #CAPACITY}. */
    public static final int MAX_RECORD_FOOTPRINT = SLOT_LENGTH + RECORD_HEADER_LENGTH + MAX_KEY_LENGTH
            + MAX_INLINE_VALUE;

    static {
        if (MAX_RECORD_FOOTPRINT * 3 > CAPACITY) {
            throw new ExceptionInInitializerError("node records too large for splits: " + MAX_RECORD_FOOTPRINT);
        }
    }

    private NodePageLayout() {
    }

    public static int slotOffset(int index) {
        return HEADER_LENGTH + SLOT_LENGTH * index;
    }

    /** Payload bytes a record with this tag carries. */
    public static int payloadLength(int tag) {
        if (tag == TAG_BLOB) {
            return BLOB_REFERENCE_LENGTH;
        }
        if (tag > MAX_INLINE_TAG) {
            // tags come from node pages in PM (records built here are checked before they are written)
            throw new StructureCorruptException("invalid record tag 0x" + Integer.toHexString(tag)
                    + " in a node page: expected at most 0x" + Integer.toHexString(MAX_INLINE_TAG) + " or 0x"
                    + Integer.toHexString(TAG_BLOB));
        }
        return tag;
    }

    public static int recordLength(int keyLength, int tag) {
        return RECORD_HEADER_LENGTH + keyLength + payloadLength(tag);
    }

    /** Whether {@code kind} is a kind byte this layout defines. */
    public static boolean isKnownKind(byte kind) {
        return kind == KIND_LEAF || kind == KIND_INNER || kind == KIND_BUCKET || kind == KIND_FREE;
    }
}
