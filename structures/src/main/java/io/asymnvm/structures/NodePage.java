package io.asymnvm.structures;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.asymnvm.structures.layout.NodePageLayout.BLOB_ADDRESS_OFFSET;
import static io.asymnvm.structures.layout.NodePageLayout.BLOB_LENGTH_OFFSET;
import static io.asymnvm.structures.layout.NodePageLayout.CAPACITY;
import static io.asymnvm.structures.layout.NodePageLayout.COUNT_OFFSET;
import static io.asymnvm.structures.layout.NodePageLayout.GARBAGE_OFFSET;
import static io.asymnvm.structures.layout.NodePageLayout.HEADER_LENGTH;
import static io.asymnvm.structures.layout.NodePageLayout.HEAP_START_OFFSET;
import static io.asymnvm.structures.layout.NodePageLayout.KIND_OFFSET;
import static io.asymnvm.structures.layout.NodePageLayout.LEVEL_OFFSET;
import static io.asymnvm.structures.layout.NodePageLayout.LINK0_OFFSET;
import static io.asymnvm.structures.layout.NodePageLayout.LINK1_OFFSET;
import static io.asymnvm.structures.layout.NodePageLayout.MAX_KEY_LENGTH;
import static io.asymnvm.structures.layout.NodePageLayout.NODE_SIZE;
import static io.asymnvm.structures.layout.NodePageLayout.RECORD_HEADER_LENGTH;
import static io.asymnvm.structures.layout.NodePageLayout.RECORD_KEY_LENGTH_OFFSET;
import static io.asymnvm.structures.layout.NodePageLayout.RECORD_TAG_OFFSET;
import static io.asymnvm.structures.layout.NodePageLayout.SLOT_LENGTH;
import static io.asymnvm.structures.layout.NodePageLayout.TAG_BLOB;
import static io.asymnvm.structures.layout.NodePageLayout.payloadLength;
import static io.asymnvm.structures.layout.NodePageLayout.slotOffset;

/**
 * Flyweight over a {@link Block} holding a node page ({@link io.asymnvm.structures.layout.NodePageLayout}):
 * binary search over the slots, record insert/remove that touch only the changed bytes, compaction, and
 * rebuilding from a list of records (splits, merges). Records are handled as byte arrays in the layout's record
 * format ({@link Records}).
 */
final class NodePage {
    final Block block;

    NodePage(Block block) {
        this.block = block;
    }

    /** Initializes an empty node of {@code kind} and {@code level} in {@code block}. */
    static NodePage init(Block block, byte kind, int level) {
        NodePage p = new NodePage(block);
        block.putByte(KIND_OFFSET, kind);
        block.putByte(LEVEL_OFFSET, level);
        block.putShort(COUNT_OFFSET, 0);
        block.putShort(HEAP_START_OFFSET, NODE_SIZE);
        block.putShort(GARBAGE_OFFSET, 0);
        block.putLong(LINK0_OFFSET, 0);
        block.putLong(LINK1_OFFSET, 0);
        return p;
    }

    long address() {
        return block.address;
    }

    byte kind() {
        return (byte) block.getByte(KIND_OFFSET);
    }

    int level() {
        return block.getByte(LEVEL_OFFSET) & 0xFF;
    }

    int count() {
        int n = block.getShort(COUNT_OFFSET);
        if (n < 0 || slotOffset(n) > NODE_SIZE) {
            throw damaged(COUNT_OFFSET, "slot count", "at most " + (NODE_SIZE - slotOffset(0)) / SLOT_LENGTH, n);
        }
        return n;
    }

    /**
     * Offsets and lengths stored in a page are checked before they are followed, so a damaged page is reported
     * as the structure's corruption (page, offset in the page, expected, actual), never as an index error.
     */
    private StructureCorruptException damaged(int offset, String what, String expected, long actual) {
        return new StructureCorruptException((block.owner == null ? "" : block.owner + " is corrupt: ") + "node page "
                + block.address + ": " + what + " at page offset " + offset + ": expected " + expected + ", actual "
                + actual);
    }

    int heapStart() {
        return block.getShort(HEAP_START_OFFSET);
    }

    int garbage() {
        return block.getShort(GARBAGE_OFFSET);
    }

    long link0() {
        return block.getLong(LINK0_OFFSET);
    }

    long link1() {
        return block.getLong(LINK1_OFFSET);
    }

    void setLink0(long v) {
        block.putLong(LINK0_OFFSET, v);
    }

    void setLink1(long v) {
        block.putLong(LINK1_OFFSET, v);
    }

    /** Slot and record bytes in use. */
    int liveBytes() {
        return SLOT_LENGTH * count() + (NODE_SIZE - heapStart() - garbage());
    }

    int recordOffset(int i) {
        int o = block.getShort(slotOffset(i));
        if (o < slotOffset(0) || o > NODE_SIZE - RECORD_HEADER_LENGTH) {
            throw damaged(slotOffset(i), "record offset of slot " + i, "within [" + slotOffset(0) + ", "
                    + (NODE_SIZE - RECORD_HEADER_LENGTH) + "]", o);
        }
        return o;
    }

    int keyLength(int i) {
        return keyLengthAt(recordOffset(i), i);
    }

    /** The key length of record {@code i}, whose checked record offset is {@code o}. */
    private int keyLengthAt(int o, int i) {
        int k = block.getShort(o + RECORD_KEY_LENGTH_OFFSET);
        if (k < 0 || k > MAX_KEY_LENGTH || o + RECORD_HEADER_LENGTH + k > NODE_SIZE) {
            throw damaged(o + RECORD_KEY_LENGTH_OFFSET, "key length of record " + i, "within [0, "
                    + Math.min(MAX_KEY_LENGTH, NODE_SIZE - o - RECORD_HEADER_LENGTH) + "]", k);
        }
        return k;
    }

    int keyOffset(int i) {
        return recordOffset(i) + RECORD_HEADER_LENGTH;
    }

    int tag(int i) {
        return block.getShort(recordOffset(i) + RECORD_TAG_OFFSET);
    }

    int payloadOffset(int i) {
        return keyOffset(i) + keyLength(i);
    }

    int recordLength(int i) {
        return RECORD_HEADER_LENGTH + keyLength(i) + payloadLength(tag(i));
    }

    byte[] key(int i) {
        int o = keyOffset(i);
        return Arrays.copyOfRange(block.bytes, o, o + keyLength(i));
    }

    byte[] record(int i) {
        int o = recordOffset(i);
        return Arrays.copyOfRange(block.bytes, o, o + recordLength(i));
    }

    /** Inner record: the child right of separator {@code i}. */
    long child(int i) {
        int o = payloadOffset(i);
        if (o > NODE_SIZE - 8) {
            throw damaged(o, "child pointer of record " + i, "within the page", o);
        }
        return block.getLong(o);
    }

    /** Inner node: child {@code j} in 0..count ({@code 0} is {@code link0}). */
    long childAt(int j) {
        return j == 0 ? link0() : child(j - 1);
    }

    boolean isBlob(int i) {
        return tag(i) == TAG_BLOB;
    }

    int blobLength(int i) {
        return block.getInt(payloadOffset(i) + BLOB_LENGTH_OFFSET);
    }

    long blobAddress(int i) {
        return block.getLong(payloadOffset(i) + BLOB_ADDRESS_OFFSET);
    }

    /** Compares key {@code i} with {@code key} (unsigned lexicographic). */
    int compareKey(int i, byte[] key) {
        int r = recordOffset(i); // checked once per compare: the search's inner loop
        int o = r + RECORD_HEADER_LENGTH;
        return Arrays.compareUnsigned(block.bytes, o, o + keyLengthAt(r, i), key, 0, key.length);
    }

    /** Index of {@code key}, or {@code -(insertionPoint) - 1}. */
    int search(byte[] key) {
        int low = 0;
        int high = count() - 1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            int c = compareKey(mid, key);
            if (c < 0) {
                low = mid + 1;
            } else if (c > 0) {
                high = mid - 1;
            } else {
                return mid;
            }
        }
        return -(low + 1);
    }

    /** Whether a record of {@code length} bytes fits (possibly after compaction). */
    boolean hasRoom(int length) {
        return liveBytes() + length + SLOT_LENGTH <= CAPACITY;
    }

    /** Inserts {@code record} at slot {@code i}; false (nothing changed) if it does not fit. */
    boolean insert(int i, byte[] record) {
        if (!hasRoom(record.length)) {
            return false;
        }
        int n = count();
        int slotsEnd = slotOffset(n);
        if (heapStart() - slotsEnd < record.length + SLOT_LENGTH) {
            compact();
        }
        int at = heapStart() - record.length;
        block.putBytes(at, record, 0, record.length);
        block.putShort(HEAP_START_OFFSET, at);
        int from = slotOffset(i);
        block.own();
        System.arraycopy(block.bytes, from, block.bytes, from + SLOT_LENGTH, slotsEnd - from);
        block.markDirty(from, slotsEnd + SLOT_LENGTH);
        block.putShort(from, at);
        block.putShort(COUNT_OFFSET, n + 1);
        return true;
    }

    void append(byte[] record) {
        if (!insert(count(), record)) {
            throw new IllegalStateException("record of " + record.length + " bytes does not fit node "
                    + address() + " (" + liveBytes() + " live bytes)");
        }
    }

    /** Removes the record at slot {@code i}. */
    void remove(int i) {
        int n = count();
        int at = recordOffset(i);
        int length = recordLength(i);
        if (at == heapStart()) {
            block.putShort(HEAP_START_OFFSET, at + length);
        } else {
            block.putShort(GARBAGE_OFFSET, garbage() + length);
        }
        int from = slotOffset(i + 1);
        int slotsEnd = slotOffset(n);
        block.own();
        System.arraycopy(block.bytes, from, block.bytes, from - SLOT_LENGTH, slotsEnd - from);
        block.markDirty(from - SLOT_LENGTH, slotsEnd - SLOT_LENGTH);
        block.putShort(COUNT_OFFSET, n - 1);
        if (n == 1) {
            block.putShort(HEAP_START_OFFSET, NODE_SIZE);
            block.putShort(GARBAGE_OFFSET, 0);
        }
    }

    /**
     * Overwrites the inline value of leaf record {@code i} with {@code value} in place, if it is no longer than the
     * record's payload: only the value bytes (and, when shorter, the tag and the garbage count) change, so the redo
     * of an update carries the value, not the shifted slots and the re-inserted record. The bytes a shorter value
     * leaves behind become garbage, reclaimed by the next compaction. Returns how many bytes the record shrank, or
     * -1 (nothing changed) if the record holds a blob reference or the value does not fit.
     */
    int overwriteInlineValue(int i, byte[] value) {
        int tag = tag(i);
        if (tag == TAG_BLOB || value.length > tag) {
            return -1;
        }
        int o = payloadOffset(i);
        block.putBytes(o, value, 0, value.length);
        int shrink = tag - value.length;
        if (shrink > 0) {
            block.putShort(recordOffset(i) + RECORD_TAG_OFFSET, value.length);
            block.putShort(GARBAGE_OFFSET, garbage() + shrink);
        }
        return shrink;
    }

    /** Sets the child pointer of inner record {@code i}. */
    void setChild(int i, long child) {
        block.putLong(payloadOffset(i), child);
    }

    /** Every record, in slot order. */
    List<byte[]> records() {
        int n = count();
        List<byte[]> out = new ArrayList<>(n + 1);
        for (int i = 0; i < n; i++) {
            out.add(record(i));
        }
        return out;
    }

    /** Repacks the records at the end of the page, dropping garbage. */
    void compact() {
        List<byte[]> recs = records();
        block.own();
        int at = NODE_SIZE;
        for (int i = 0; i < recs.size(); i++) {
            byte[] r = recs.get(i);
            at -= r.length;
            System.arraycopy(r, 0, block.bytes, at, r.length);
            block.putShort(slotOffset(i), at);
        }
        block.markDirty(at, NODE_SIZE);
        block.putShort(HEAP_START_OFFSET, at);
        block.putShort(GARBAGE_OFFSET, 0);
    }

    /** Replaces the content by {@code records[from, to)}, keeping kind, level and links. */
    void rebuild(List<byte[]> records, int from, int to) {
        block.putShort(COUNT_OFFSET, 0);
        block.putShort(HEAP_START_OFFSET, NODE_SIZE);
        block.putShort(GARBAGE_OFFSET, 0);
        for (int i = from; i < to; i++) {
            append(records.get(i));
        }
    }
}
