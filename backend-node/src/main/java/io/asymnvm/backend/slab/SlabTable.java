package io.asymnvm.backend.slab;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.CorruptRecordException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.SlabHeaderLayout;
import io.asymnvm.core.layout.SlabTableLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.core.region.PersistentRegion;

import java.util.Arrays;

/**
 * The persistent slab owner table. Owners are mirrored in DRAM for the replayer's per-write ownership checks.
 * Thread-safe.
 *
 * <p><b>Grant.</b> Refused with {@code QUOTA_EXCEEDED} when the frontend already holds its quota. Otherwise the
 * lowest free slab above the frontend's first slab is taken (its first slab holds its root and directory words
 * and must stay its lowest, so no grant goes below it). A slab granted before (nonzero magic) is cleaned first:
 * the bytes its previous owner allocated are zeroed and persisted, then the allocator header is written and
 * persisted, then the owner word is stored and persisted, all before the reply. A crash leaves the slab free, and
 * a repeated grant redoes whatever cleaning the crash cut short; the new owner always sees zeroed memory.
 *
 * <p><b>Return.</b> {@link #release} takes a slab back only from its owner (else {@code ACCESS_DENIED}), never
 * the owner's first slab, and only if its header, as replay left it in PM, says every block is free; the owner
 * word is cleared and persisted (one atomic 8-byte store) before the reply, so a crash leaves the slab owned or
 * free, never anything in between, and the owner learns which from the attach reply.
 */
public final class SlabTable {
    private final PersistentRegion region;
    private final Superblock sb;
    private final int[] owners;
    private final int[] held;
    /** Each frontend's first (lowest) slab, -1 if none: grants never go below it and it is never returned. */
    private final int[] first;
    private final int quota;

    public SlabTable(PersistentRegion region, Superblock sb) {
        this(region, sb, 0);
    }

    /** {@code quota}: the most slabs one frontend may hold, 0 = no limit. */
    public SlabTable(PersistentRegion region, Superblock sb, int quota) {
        if (quota < 0) {
            throw new IllegalArgumentException("slab quota per frontend negative: " + quota);
        }
        this.region = region;
        this.sb = sb;
        this.quota = quota;
        this.owners = new int[Math.toIntExact(sb.slabCount())];
        this.held = new int[sb.maxFrontends()];
        this.first = new int[sb.maxFrontends()];
        load();
    }

    /** Reads every owner word from PM (validated) into the DRAM mirror of the table. */
    private void load() {
        Arrays.fill(held, 0);
        Arrays.fill(first, -1);
        for (int i = 0; i < owners.length; i++) {
            long word = region.getLongVolatile(SlabTableLayout.entryOffset(sb.slabTableOffset(), i));
            // check the whole word: ownerOf truncates to int, so a flipped high bit would pass as free or owned
            if (word < SlabTableLayout.FREE || word > SlabTableLayout.ownerWord(sb.maxFrontends() - 1)) {
                throw new CorruptRecordException(region.name(),
                        SlabTableLayout.entryOffset(sb.slabTableOffset(), i), "slab owner word at most "
                        + SlabTableLayout.ownerWord(sb.maxFrontends() - 1),
                        SlabTableLayout.ownerWord(sb.maxFrontends() - 1), word);
            }
            owners[i] = SlabTableLayout.ownerOf(word);
            if (owners[i] >= 0) {
                if (held[owners[i]]++ == 0) {
                    first[owners[i]] = i;
                }
            }
        }
    }

    // ---- a mirror keeps its table in step with the shipped one (io.asymnvm.backend.mirror.MirrorReplayGate) ----

    /** A grant ({@code from} -1) or a return ({@code to} -1), persisted; called under the table's monitor. */
    @FunctionalInterface
    public interface ChangeListener {
        void changed(long slab, int from, int to);
    }

    private volatile ChangeListener listener;

    /** Where a backend's grants and returns go, in order (its mirror shippers); null for none. */
    public void onChange(ChangeListener l) {
        this.listener = l;
    }

    private void notifyChange(long slab, int from, int to) {
        ChangeListener l = listener;
        if (l != null) {
            l.changed(slab, from, to);
        }
    }

    /** The owner of {@code slab}, or -1 when free. */
    public synchronized int ownerOf(long slab) {
        return owners[Math.toIntExact(slab)];
    }

    /** Every owner word, as stored in PM (what a backend ships to its mirrors). */
    public synchronized long[] ownerWords() {
        long[] w = new long[owners.length];
        for (int i = 0; i < owners.length; i++) {
            w[i] = owners[i] < 0 ? SlabTableLayout.FREE : SlabTableLayout.ownerWord(owners[i]);
        }
        return w;
    }

    /**
     * A mirror's grant as its backend made it: cleans and initialises {@code slab} exactly as {@link #grant} did
     * (same code), then stores and persists the owner word. No quota: the backend checked it.
     */
    public synchronized void assign(long slab, int frontendId) {
        int s = Math.toIntExact(slab);
        initialise(s);
        store(s, SlabTableLayout.ownerWord(frontendId));
        owners[s] = frontendId;
        held[frontendId]++;
    }

    /** A mirror's return as its backend took it: the owner word cleared and persisted. */
    public synchronized void free(long slab) {
        int s = Math.toIntExact(slab);
        store(s, SlabTableLayout.FREE);
        if (owners[s] >= 0) {
            held[owners[s]]--;
        }
        owners[s] = -1;
    }

    /**
     * A mirror adopting a copied table: every owner word stored as given, without cleaning (the heap was copied
     * with it), persisted, and the DRAM mirror reloaded.
     */
    public synchronized void adopt(long[] ownerWords) {
        if (ownerWords.length != owners.length) {
            throw new IllegalArgumentException(ownerWords.length + " owner words for " + owners.length + " slabs");
        }
        for (long w : ownerWords) {
            if (w < SlabTableLayout.FREE || w > SlabTableLayout.ownerWord(sb.maxFrontends() - 1)) {
                throw new IllegalArgumentException("slab owner word " + w + " outside [0, "
                        + SlabTableLayout.ownerWord(sb.maxFrontends() - 1) + "]");
            }
        }
        for (int i = 0; i < ownerWords.length; i++) {
            region.putLongVolatile(SlabTableLayout.entryOffset(sb.slabTableOffset(), i), ownerWords[i]);
        }
        region.persist(SlabTableLayout.entryOffset(sb.slabTableOffset(), 0),
                (long) owners.length * SlabTableLayout.ENTRY_LENGTH);
        load();
    }

    /** Re-reads the table from PM (a promoted mirror: first slabs and counts as a restart would find them). */
    public synchronized void reload() {
        load();
    }

    private void store(int s, long word) {
        long entry = SlabTableLayout.entryOffset(sb.slabTableOffset(), s);
        region.putLongVolatile(entry, word);
        region.persist(entry, SlabTableLayout.ENTRY_LENGTH);
    }

    public synchronized long grant(int frontendId) {
        if (quota > 0 && held[frontendId] >= quota) {
            throw new AsymNvmException(ErrorCode.QUOTA_EXCEEDED, "frontend " + frontendId + " holds "
                    + held[frontendId] + " slabs, quota " + quota);
        }
        int home = first[frontendId];
        for (int i = home + 1; i < owners.length; i++) {
            if (owners[i] < 0) {
                initialise(i);
                long entry = SlabTableLayout.entryOffset(sb.slabTableOffset(), i);
                region.putLongVolatile(entry, SlabTableLayout.ownerWord(frontendId));
                region.persist(entry, SlabTableLayout.ENTRY_LENGTH);
                owners[i] = frontendId;
                if (held[frontendId]++ == 0) {
                    first[frontendId] = i;
                }
                notifyChange(i, -1, frontendId);
                return i;
            }
        }
        long below = home < 0 ? 0 : Arrays.stream(owners, 0, home).filter(o -> o < 0).count();
        throw new AsymNvmException(ErrorCode.NO_SPACE, "no free slab" + (below == 0 ? ": all " + owners.length
                + " slabs of " + sb.slabSize() + " bytes are granted" : " above slab " + home + ", the first slab "
                + "of frontend " + frontendId + " (" + below + " free slabs lie below it, where its root and "
                + "directory words could not stay first)"));
    }

    /** Cleans what a previous owner left, then writes a fresh allocator header (see the class comment). */
    private void initialise(int slab) {
        long slabAt = sb.slabOffset(slab);
        long magic = region.getLong(slabAt + SlabHeaderLayout.MAGIC_OFFSET);
        if (magic != 0) { // granted before (a never-granted slab of a formatted image is all zero)
            long bump = magic == SlabHeaderLayout.MAGIC
                    ? region.getLong(slabAt + SlabHeaderLayout.BUMP_OFFSET) : sb.slabSize();
            long used = Math.max(SlabHeaderLayout.HEADER_LENGTH, Math.min(bump, sb.slabSize()));
            if (used > SlabHeaderLayout.HEADER_LENGTH) {
                region.zero(slabAt + SlabHeaderLayout.HEADER_LENGTH, used - SlabHeaderLayout.HEADER_LENGTH);
                region.persist(slabAt + SlabHeaderLayout.HEADER_LENGTH, used - SlabHeaderLayout.HEADER_LENGTH);
            }
        }
        region.zero(slabAt, SlabHeaderLayout.HEADER_LENGTH);
        region.putLong(slabAt + SlabHeaderLayout.MAGIC_OFFSET, SlabHeaderLayout.MAGIC);
        region.putLong(slabAt + SlabHeaderLayout.BUMP_OFFSET, SlabHeaderLayout.HEADER_LENGTH);
        region.putLong(slabAt + SlabHeaderLayout.LIVE_OFFSET, SlabHeaderLayout.LIVE_EMPTY);
        region.persist(slabAt, SlabHeaderLayout.HEADER_LENGTH);
    }

    /**
     * Takes slab {@code slab} back from {@code frontendId}: refused unless that frontend owns it, it is not the
     * frontend's first slab, and its header in PM counts no live block.
     */
    public synchronized void release(int frontendId, long slab) {
        if (slab < 0 || slab >= owners.length) {
            throw new AsymNvmException(ErrorCode.BAD_REQUEST, "frontend " + frontendId + " returns slab " + slab
                    + " outside [0, " + owners.length + ")");
        }
        int s = (int) slab;
        if (owners[s] != frontendId) {
            throw new AsymNvmException(ErrorCode.ACCESS_DENIED, "frontend " + frontendId + " returns slab " + slab
                    + ", which " + (owners[s] < 0 ? "is free" : "belongs to frontend " + owners[s]));
        }
        if (first[frontendId] == s) {
            throw new AsymNvmException(ErrorCode.BAD_REQUEST, "frontend " + frontendId + " returns slab " + slab
                    + ", its first slab (it holds its root and directory words)");
        }
        long slabAt = sb.slabOffset(s);
        long magic = region.getLong(slabAt + SlabHeaderLayout.MAGIC_OFFSET);
        long live = region.getLong(slabAt + SlabHeaderLayout.LIVE_OFFSET);
        if (magic != SlabHeaderLayout.MAGIC || live != SlabHeaderLayout.LIVE_EMPTY) {
            throw new AsymNvmException(ErrorCode.BAD_REQUEST, "frontend " + frontendId + " returns slab " + slab
                    + ", which is not empty in PM: live word " + live + " (expected " + SlabHeaderLayout.LIVE_EMPTY
                    + "), magic 0x" + Long.toHexString(magic));
        }
        long entry = SlabTableLayout.entryOffset(sb.slabTableOffset(), s);
        region.putLongVolatile(entry, SlabTableLayout.FREE);
        region.persist(entry, SlabTableLayout.ENTRY_LENGTH);
        owners[s] = -1;
        held[frontendId]--;
        notifyChange(s, frontendId, -1);
    }

    /** The frontend's first (lowest) slab, which holds its root and directory words; -1 if it holds none. */
    public synchronized int firstSlabOf(int frontendId) {
        return first[frontendId];
    }

    public synchronized long[] ownedBy(int frontendId) {
        return java.util.stream.IntStream.range(0, owners.length).filter(i -> owners[i] == frontendId)
                .asLongStream().toArray();
    }

    /** How many slabs {@code frontendId} holds. */
    public synchronized int heldBy(int frontendId) {
        return held[frontendId];
    }

    /** The most slabs one frontend may hold; 0 = no limit. */
    public int quota() {
        return quota;
    }

    /** True if the heap range {@code [heapOffset, heapOffset + length)} lies in slabs owned by the frontend. */
    public boolean owns(int frontendId, long heapOffset, long length) {
        if (heapOffset < 0 || length < 0 || heapOffset > sb.slabCount() * sb.slabSize() - length) { // no overflow
            return false;
        }
        long first = heapOffset / sb.slabSize();
        long last = (heapOffset + Math.max(length, 1) - 1) / sb.slabSize();
        for (long s = first; s <= last; s++) {
            if (owners[(int) s] != frontendId) {
                return false;
            }
        }
        return true;
    }

    public synchronized long freeSlabs() {
        return Arrays.stream(owners).filter(o -> o < 0).count();
    }
}
