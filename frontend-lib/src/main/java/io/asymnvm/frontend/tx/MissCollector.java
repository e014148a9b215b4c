package io.asymnvm.frontend.tx;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The misses of a <em>collecting</em> attempt (issue 8 goal 4, "no wasted runs"). Without it an attempt is
 * abandoned at its first page miss, and a transaction that needs k uncached pages runs k+1 times, one round trip
 * between runs. A collecting attempt does not stop at a miss: it records the page, goes on with a zero page in its
 * place and is <em>doomed</em> (nothing it computes is committed or returned); at its end every recorded page is
 * fetched in one batch ({@link PageFetcher#fetchAll}) and the next attempt normally finds them all.
 *
 * <p>A doomed attempt computes on made-up bytes, so whatever it does is contained: a zero page reads as empty
 * nodes and null pointers (so traversals end early), any exception or signal it raises is swallowed by the
 * executor, and it is stopped (a {@link RetrySignal} thrown from the next page access) once it has recorded
 * {@value #MAX_MISSING_PAGES} pages, made {@value #MAX_DOOMED_ACCESSES} page accesses while doomed, or run
 * {@value #MAX_DOOMED_MILLIS} ms since it became doomed. Pages reached only through a made-up pointer may be
 * fetched for nothing; they are ordinary pages of the heap and the cache keeps them like any other. Pointers read
 * from fetched pages still lead to further misses (a cold B+tree descent misses one level per run), so the
 * executor collects in its first {@value Executor#COLLECTING_RUNS} doomed runs only and then falls back to
 * abandoning at the first miss.
 *
 * <p>Confined to the attempt's thread.
 */
final class MissCollector {
    static final int MAX_MISSING_PAGES = 1024;
    static final long MAX_DOOMED_ACCESSES = 1L << 20;
    static final long MAX_DOOMED_MILLIS = 100;

    private final int pageSize;
    private final TreeSet<Long> missing = new TreeSet<>();
    /** One zero page per missing page, so that the attempt sees its own writes to a placeholder. */
    private final Map<Long, byte[]> placeholders = new HashMap<>();
    private long accesses;
    private long doomedAt;

    MissCollector(int pageSize) {
        this.pageSize = pageSize;
    }

    /** Whether the attempt missed a page: whatever it does from now on is discarded. */
    boolean doomed() {
        return !missing.isEmpty();
    }

    /** Records a miss and returns the zero page that stands for it. */
    byte[] placeholder(long pageIndex) {
        byte[] p = placeholders.get(pageIndex);
        if (p == null) {
            if (missing.isEmpty()) {
                doomedAt = System.nanoTime();
            }
            missing.add(pageIndex);
            p = new byte[pageSize];
            placeholders.put(pageIndex, p);
        }
        return p;
    }

    /** A page access while doomed: false once the attempt must be stopped (see the class comment). */
    boolean mayContinue() {
        if (missing.isEmpty()) {
            return true;
        }
        accesses++;
        if (missing.size() >= MAX_MISSING_PAGES || accesses >= MAX_DOOMED_ACCESSES) {
            return false;
        }
        return (accesses & 1023) != 0
                || System.nanoTime() - doomedAt < TimeUnit.MILLISECONDS.toNanos(MAX_DOOMED_MILLIS);
    }

    /** The signal that ends a doomed attempt: every recorded page, ascending. */
    RetrySignal signal() {
        return new RetrySignal(missing.stream().mapToLong(Long::longValue).toArray());
    }
}
