package io.asymnvm.frontend.tx;

import io.asymnvm.frontend.link.EpochFence;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What one frontend keeps across failovers (issue 9, DESIGN §6 "Configuration and failover"): the epoch fence
 * every link checks, and the failover counters. Its identity is the frontend's: a transaction engine and the
 * engines that succeed it on promoted mirrors share one {@code Failover}, so a proxy made before a failover is
 * recognised as the same frontend after it.
 *
 * <p>The procedure itself lives in {@link TransactionEngine} (it needs the engine's locks and rings):
 * <ol>
 *   <li>The backend stays unreachable for the reconnect timeout (detection).</li>
 *   <li>Every SYNC mirror is re-attached until one answers as the serving backend with an epoch newer than any
 *       this frontend has seen, or the failover timeout passes. Mirrors that still answer as mirrors get their
 *       semantic ring re-posted (a fresh session) and stay mirrors.</li>
 *   <li>On the promoted mirror, every retained semantic record is written again at its position and FLUSHed:
 *       every record this frontend posted is durable there, so callers blocked in a commit return.</li>
 *   <li>The old engine (page cache, redo buffer, retained redo) is discarded; a new engine attaches afresh,
 *       exactly as a restarted frontend does, and recovery re-executes every semantic record the new backend has
 *       not applied, keeping their transaction ids. Calls not yet logged run again on the new engine.</li>
 * </ol>
 * A node answering with an epoch older than the fence is refused ({@code STALE_EPOCH}), so a replaced backend
 * that comes back never receives a write.
 */
public final class Failover {
    private final EpochFence fence;
    private final AtomicLong failovers = new AtomicLong();
    private volatile long detectNanos;
    private volatile long resumeNanos;

    public Failover(EpochFence fence) {
        this.fence = fence == null ? new EpochFence() : fence;
    }

    public EpochFence fence() {
        return fence;
    }

    void record(long detect, long resume) {
        detectNanos = detect;
        resumeNanos = resume;
        failovers.incrementAndGet();
    }

    long failovers() {
        return failovers.get();
    }

    long detectMillis() {
        return TimeUnit.NANOSECONDS.toMillis(detectNanos);
    }

    long resumeMillis() {
        return TimeUnit.NANOSECONDS.toMillis(resumeNanos);
    }
}
