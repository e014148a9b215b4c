package io.asymnvm.backend.slab;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.SlabHeaderLayout;
import io.asymnvm.core.layout.SlabTableLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.core.region.PersistentRegion;

import java.util.Arrays;

/**
 * The persistent slab owner table. A grant initializes the slab's allocator header, persists it, then stores
 * and persists the owner word, all before the reply: a crash leaves a slab either free or fully granted.
 * Owners are mirrored in DRAM for the replayer's per-write ownership checks. Thread-safe.
 */
public final class SlabTable {
    private final PersistentRegion region;
    private final Superblock sb;
    private final int[] owners;

    public SlabTable(PersistentRegion region, Superblock sb) {
        this.region = region;
        this.sb = sb;
        this.owners = new int[Math.toIntExact(sb.slabCount())];
        for (int i = 0; i < owners.length; i++) {
            long word = region.getLongVolatile(SlabTableLayout.entryOffset(sb.slabTableOffset(), i));
            // check the whole word: ownerOf truncates to int, so a flipped high bit would pass as free or owned
            if (word < SlabTableLayout.FREE || word > SlabTableLayout.ownerWord(sb.maxFrontends() - 1)) {
                throw new io.asymnvm.core.CorruptRecordException(region.name(),
                        SlabTableLayout.entryOffset(sb.slabTableOffset(), i), "slab owner word at most "
                        + SlabTableLayout.ownerWord(sb.maxFrontends() - 1),
                        SlabTableLayout.ownerWord(sb.maxFrontends() - 1), word);
            }
            owners[i] = SlabTableLayout.ownerOf(word);
        }
    }

    public synchronized long grant(int frontendId) {
        for (int i = 0; i < owners.length; i++) {
            if (owners[i] < 0) {
                long slabAt = sb.slabOffset(i);
                region.zero(slabAt, SlabHeaderLayout.HEADER_LENGTH);
                region.putLong(slabAt + SlabHeaderLayout.MAGIC_OFFSET, SlabHeaderLayout.MAGIC);
                region.putLong(slabAt + SlabHeaderLayout.BUMP_OFFSET, SlabHeaderLayout.HEADER_LENGTH);
                region.persist(slabAt, SlabHeaderLayout.HEADER_LENGTH);
                long entry = SlabTableLayout.entryOffset(sb.slabTableOffset(), i);
                region.putLongVolatile(entry, SlabTableLayout.ownerWord(frontendId));
                region.persist(entry, SlabTableLayout.ENTRY_LENGTH);
                owners[i] = frontendId;
                return i;
            }
        }
        throw new AsymNvmException(ErrorCode.NO_SPACE, "no free slab: all " + owners.length + " slabs of "
                + sb.slabSize() + " bytes are granted");
    }

    public synchronized long[] ownedBy(int frontendId) {
        return java.util.stream.IntStream.range(0, owners.length).filter(i -> owners[i] == frontendId)
                .asLongStream().toArray();
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
