package io.asymnvm.backend.mirror;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.asymnvm.backend.log.FrontendLog;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.recovery.log.RingReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a {@link MirrorShipper} does more for an ASYNC mirror (issue 9, item 2: AsymNVM's periodic sync), and the
 * mirror's lag. Frontends do not post to an ASYNC mirror, so besides the image copy and the redo stream the shipper
 * writes each frontend's semantic records that are durable on this backend (up to the durable watermark its FLUSHes
 * stamped) at the same ring positions: a promoted ASYNC mirror holds them and a frontend attaching to it
 * re-executes those it has not applied, exactly as after a backend restart.
 *
 * <p><b>Periodic, bounded.</b> The shipper ships (semantic records, redo, FLUSH, REPLICATE SHIPPED) when
 * {@link AsyncLagBounds#shipIntervalMillis()} passed since its last pass or when a frontend has
 * {@link AsyncLagBounds#maxLagTx()} unshipped records, and samples the lag every millisecond in between:
 * <ul>
 *   <li>{@code unshipped_tx} of a frontend: its semantic records (one per acknowledged transaction) that are
 *       durable here and not yet written to the mirror, at most {@code maxLagTx + 1} counted;
 *   <li>{@code lag_ms}: since the oldest of them was first seen (a pass that left records behind counts from its
 *       start); 0 while nothing is unshipped.
 * </ul>
 * A mirror whose lag exceeds either bound is {@link #behind()} until a sample finds it within both again: logged
 * with value and limit, counted in {@code bound_exceeded}, reported in {@code status}, and set {@code CATCHING_UP}
 * in the cluster configuration by {@code ClusterBackend} (never promoted while behind). What a promoted ASYNC mirror
 * may lack is exactly these unshipped records (at most the lag).
 *
 * <p>Threading: the shipper's thread calls everything but the getters, which are read by status and the cluster.
 */
final class AsyncShipping {
    private static final Logger LOG = LoggerFactory.getLogger(AsyncShipping.class);
    /** A mirror that hovers at its bound would log every crossing: one line a second at most (all are counted). */
    private final io.asymnvm.core.logging.RateLimitedLog behindLog = io.asymnvm.core.logging.RateLimitedLog.warn(LOG);

    private final String name;
    private final FrontendLog[] logs;
    private final AsyncLagBounds bounds;
    /** Per frontend: the semantic ring position up to which records were written to the mirror. */
    private final long[] semShipped;
    private final long[] unshipped;
    private final long intervalNanos;
    private volatile long maxUnshipped;
    private volatile long oldestUnshippedNanos;
    private volatile boolean behind;
    private final AtomicLong boundExceeded = new AtomicLong();
    private final AtomicLong recordsShipped = new AtomicLong();
    private final AtomicLong passes = new AtomicLong();
    private long lastPassNanos = System.nanoTime();

    AsyncShipping(String name, FrontendLog[] logs, AsyncLagBounds bounds) {
        this.name = name;
        this.logs = logs;
        this.bounds = bounds;
        this.semShipped = new long[logs.length];
        this.unshipped = new long[logs.length];
        this.intervalNanos = TimeUnit.MILLISECONDS.toNanos(bounds.shipIntervalMillis());
    }

    AsyncLagBounds bounds() {
        return bounds;
    }

    /** An image copy starts from these checkpoints' semantic heads: records before them are in the copy. */
    void startAt(long[] semHeads) {
        System.arraycopy(semHeads, 0, semShipped, 0, semShipped.length);
    }

    /** Frontend {@code f}'s semantic ring position to ship from, given the mirror's published semantic head. */
    long from(int f, long mirrorSemHead) {
        semShipped[f] = Math.max(semShipped[f], mirrorSemHead); // the mirror applied those: nothing to ship
        return semShipped[f];
    }

    /** Frontend {@code f}'s durable watermark on this backend: the end of what may be shipped. */
    long durable(int f) {
        return ControlBlockLayout.durableSemTail(logs[f].controlBlock());
    }

    /** Records up to {@code position} of frontend {@code f} were written to the mirror (flushed before confirm). */
    void shipped(int f, long position, long records) {
        semShipped[f] = Math.max(semShipped[f], position);
        recordsShipped.addAndGet(records);
    }

    /** Whether a pass is due: the interval passed, or a frontend reached the transaction bound. */
    boolean due(long now) {
        return now - lastPassNanos >= intervalNanos || maxUnshipped >= bounds.maxLagTx();
    }

    /** A pass that started at {@code start} ended; the lag is sampled again. */
    void passDone(long start) {
        lastPassNanos = start;
        passes.incrementAndGet();
        sample(start);
    }

    /** Counts the unshipped durable records and checks the bounds; {@code passStart}: 0, or a pass's start. */
    void sample(long passStart) {
        long max = 0;
        for (int f = 0; f < logs.length; f++) {
            unshipped[f] = count(f);
            max = Math.max(max, unshipped[f]);
        }
        maxUnshipped = max;
        long now = System.nanoTime();
        if (max == 0) {
            oldestUnshippedNanos = 0;
        } else if (oldestUnshippedNanos == 0 || passStart != 0) {
            // records left behind by a pass were acknowledged after it read the watermarks
            oldestUnshippedNanos = passStart != 0 ? passStart : now;
        }
        long lagMs = lagMillis();
        boolean over = max > bounds.maxLagTx() || lagMs > bounds.maxLagMillis();
        if (over && !behind) {
            behind = true;
            boundExceeded.incrementAndGet();
            behindLog.log("ASYNC mirror {} is behind: {} unshipped transactions (bound {}), {} ms (bound {} ms); "
                    + "reported catching up until it is back within both ({} times so far)", name, max,
                    bounds.maxLagTx(), lagMs, bounds.maxLagMillis(), boundExceeded.get());
        } else if (!over && behind) {
            behind = false;
            LOG.debug("ASYNC mirror {} is back within its lag bounds ({} tx, {} ms)", name, max, lagMs);
        }
    }

    private long count(int f) {
        long to = durable(f);
        long pos = semShipped[f];
        RingReader reader = logs[f].semanticReader();
        long n = 0;
        while (pos < to && n <= bounds.maxLagTx()) {
            RingReader.Entry e = reader.read(pos);
            if (e.kind() == RingReader.Kind.INVALID) {
                return Math.max(n, 1); // lapped under us: behind by at least this much (the next pass finds out)
            }
            if (e.kind() == RingReader.Kind.VALID) {
                n++;
            }
            pos = e.next();
        }
        return n;
    }

    /** The most unshipped transactions of one frontend, as last sampled. */
    long maxUnshippedTx() {
        return maxUnshipped;
    }

    /** Milliseconds since the oldest unshipped record was first seen; 0 when none is unshipped. */
    long lagMillis() {
        long t = oldestUnshippedNanos;
        return t == 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t);
    }

    /** True while the lag exceeds a bound (the mirror is then reported catching up). */
    boolean behind() {
        return behind;
    }

    long boundExceeded() {
        return boundExceeded.get();
    }

    /** Adds the ASYNC counters to the mirror's status entry. */
    void describe(ObjectNode m) {
        m.put("mode", "async");
        m.put("unshipped_tx", maxUnshipped);
        m.put("lag_ms", lagMillis());
        m.put("behind", behind);
        m.put("bound_exceeded", boundExceeded.get());
        m.put("bound_lag_ms", bounds.maxLagMillis());
        m.put("bound_lag_tx", bounds.maxLagTx());
        m.put("semantic_records_shipped", recordsShipped.get());
        m.put("passes", passes.get());
        ArrayNode per = m.putArray("unshipped");
        for (int f = 0; f < logs.length; f++) {
            if (unshipped[f] > 0) {
                per.addObject().put("frontend", f).put("unshipped_tx", unshipped[f]);
            }
        }
    }
}
