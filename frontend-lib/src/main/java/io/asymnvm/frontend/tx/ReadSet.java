package io.asymnvm.frontend.tx;

import io.asymnvm.frontend.cache.PageCache;

import java.util.Arrays;

/**
 * An optimistic writer's read set ({@link OptimisticWriters}): the version of every page the attempt read, as
 * first read, checked again under the lock by {@link #unchangedIn}. Open addressing over two primitive arrays, so
 * a page read costs neither a boxed key and value nor a map node (issue 8: an attempt reads a handful of pages).
 * Confined to the attempt's thread.
 */
final class ReadSet {
    /** No page has this index (page indexes are never negative). */
    private static final long FREE = -1;
    private static final int INITIAL_SLOTS = 8;

    private long[] pages = newSlots(INITIAL_SLOTS);
    private long[] versions = new long[INITIAL_SLOTS];
    private int size;

    /** Records that page {@code pageIndex} was read at {@code version}, unless it was read before. */
    void putIfAbsent(long pageIndex, long version) {
        if (pageIndex < 0) {
            throw new IllegalArgumentException("page index negative: " + pageIndex);
        }
        int mask = pages.length - 1;
        int i = slot(pageIndex, mask);
        while (pages[i] != FREE) {
            if (pages[i] == pageIndex) {
                return;
            }
            i = (i + 1) & mask;
        }
        pages[i] = pageIndex;
        versions[i] = version;
        if (++size * 4 > pages.length * 3) {
            grow();
        }
    }

    /** How many pages were read. */
    int size() {
        return size;
    }

    /** Whether every page read still has, in {@code cache}, the version it was read at. */
    boolean unchangedIn(PageCache cache) {
        for (int i = 0; i < pages.length; i++) {
            if (pages[i] != FREE && cache.version(pages[i]) != versions[i]) {
                return false;
            }
        }
        return true;
    }

    private void grow() {
        long[] oldPages = pages;
        long[] oldVersions = versions;
        pages = newSlots(oldPages.length * 2);
        versions = new long[oldPages.length * 2];
        int mask = pages.length - 1;
        for (int j = 0; j < oldPages.length; j++) {
            if (oldPages[j] != FREE) {
                int i = slot(oldPages[j], mask);
                while (pages[i] != FREE) {
                    i = (i + 1) & mask;
                }
                pages[i] = oldPages[j];
                versions[i] = oldVersions[j];
            }
        }
    }

    private static int slot(long pageIndex, int mask) {
        return (int) ((pageIndex * 0x9E3779B97F4A7C15L) >>> 32) & mask;
    }

    private static long[] newSlots(int n) {
        long[] slots = new long[n];
        Arrays.fill(slots, FREE);
        return slots;
    }
}
