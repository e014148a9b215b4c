package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.WaitPolicy;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.frontend.link.BackendLink;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * The naive baseline's data path ({@link io.asymnvm.frontend.ExecutionMode#NAIVE}, issue 8 goal 6): what AsymNVM
 * compares its design against, kept simple and correct rather than fast.
 *
 * <p><b>Design.</b> One lock ({@link #lock()}) is held around the whole call, from the first attempt to the
 * moment its writes are in the heap, so the backend's heap is always the current state when a call starts.
 * Reads bypass the page cache: every page a transaction touches is one synchronous remote READ, each time it is
 * touched (a transaction's own writes are still seen, from its private write set). A transaction that wrote
 * commits through the ordinary protocol (semantic record, made durable: the commit point, and recovery unchanged),
 * then {@link #writeThrough} ships its redo alone and waits until the backend has applied it to the heap. So every
 * transaction pays its writes' round trips on its own call, as the baseline of the paper does; the difference is
 * that one transaction's stores travel as one redo WRITE, not one WRITE each, which makes this baseline faster,
 * never slower, than one round trip per store (the ratio to it is conservative).
 *
 * <p>Thread-safe: {@link #read} runs under the engine's execution lock inside the naive lock; the rest under the
 * naive lock.
 */
final class NaiveAccess {
    private static final long APPLY_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final long POLL_PAUSE_NANOS = TimeUnit.MICROSECONDS.toNanos(20);

    private final ReentrantLock lock = new ReentrantLock();
    private final BackendLink link;
    private final int pageSize;
    private final WaitPolicy waitPolicy;
    private final AtomicLong readRoundTrips;
    private final BooleanSupplier shipRedo;
    private final Runnable pollApplied;
    private final LongSupplier appliedTxId;

    /**
     * @param readRoundTrips counts every remote page READ
     * @param shipRedo       posts the pending redo batch (under the execution lock); false if the ring had no room
     * @param pollApplied    reads the backend's control block (one round trip) and learns its checkpoint
     * @param appliedTxId    the newest transaction the backend applied, as last learnt
     */
    NaiveAccess(BackendLink link, int pageSize, WaitPolicy waitPolicy, AtomicLong readRoundTrips,
                BooleanSupplier shipRedo, Runnable pollApplied, LongSupplier appliedTxId) {
        this.link = link;
        this.pageSize = pageSize;
        this.waitPolicy = waitPolicy;
        this.readRoundTrips = readRoundTrips;
        this.shipRedo = shipRedo;
        this.pollApplied = pollApplied;
        this.appliedTxId = appliedTxId;
    }

    /** Held around a whole call: calls run one at a time. */
    ReentrantLock lock() {
        return lock;
    }

    /** Reads heap page {@code pageIndex} from the backend, now (one round trip, no cache). */
    byte[] read(long pageIndex) {
        byte[] page = link.read(RegionIds.HEAP, pageIndex * pageSize, pageSize).await(waitPolicy).bytes();
        readRoundTrips.incrementAndGet();
        return page;
    }

    /**
     * Returns once transaction {@code txId} (already durable) is applied to the backend's heap: ships the redo
     * buffer, then reads the control block until the checkpoint passes {@code txId}; bounded by 30 s.
     */
    void writeThrough(long txId) {
        long deadline = System.nanoTime() + APPLY_WAIT_NANOS;
        boolean shipped = false;
        while (appliedTxId.getAsLong() < txId) {
            if (!shipped) {
                shipped = shipRedo.getAsBoolean();
            }
            pollApplied.run();
            if (appliedTxId.getAsLong() >= txId) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AsymNvmException(ErrorCode.TIMEOUT, "naive mode: the backend did not apply tx " + txId
                        + " within " + TimeUnit.NANOSECONDS.toMillis(APPLY_WAIT_NANOS) + " ms (applied "
                        + appliedTxId.getAsLong() + ", redo shipped: " + shipped + ")");
            }
            LockSupport.parkNanos(POLL_PAUSE_NANOS);
        }
    }
}
