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
import java.util.Arrays;
import java.util.function.IntPredicate;
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
 * then {@link #writeThrough} ships its redo alone, as one synchronous WRITE+FLUSH round trip per store of the
 * transaction ({@link #postInPieces}: the store's share of the redo record), and waits until the backend has
 * applied it to the heap. So every store costs a persisted round trip on the caller's path, as in the paper's
 * baseline. The stores land in the redo ring rather than in place: writing them in place before the record is
 * complete would let a crash expose half a transaction, and the backend's replay (one more local copy) is what
 * puts them in the heap.
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
    private final IntPredicate shipRedo;
    private final Runnable pollApplied;
    private final LongSupplier appliedTxId;

    /**
     * @param readRoundTrips counts every remote page READ
     * @param shipRedo       posts the pending redo batch in as many synchronous pieces as the transaction had stores
     *                       ({@link #postInPieces}, under the execution lock); false if the ring had no room
     * @param pollApplied    reads the backend's control block (one round trip) and learns its checkpoint
     * @param appliedTxId    the newest transaction the backend applied, as last learnt
     */
    NaiveAccess(BackendLink link, int pageSize, WaitPolicy waitPolicy, AtomicLong readRoundTrips,
                IntPredicate shipRedo, Runnable pollApplied, LongSupplier appliedTxId) {
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
     * Posts {@code length} bytes of a redo record as {@code pieces} consecutive WRITEs, each followed by a FLUSH
     * ({@code stamp}: the semantic position already durable) and awaited: one synchronous persisted round trip per
     * store of the transaction, as the baseline pays. The backend replays only a complete, CRC-valid record, so a
     * crash between pieces leaves a torn record that is never applied (and the durable semantic record recovers
     * the transaction). Returns the last FLUSH's completion.
     */
    io.asymnvm.core.fabric.Completion postInPieces(int region, long offset, byte[] data, int length, int pieces,
                                                   long stamp) {
        int n = Math.max(1, Math.min(pieces, length));
        io.asymnvm.core.fabric.Completion last = null;
        int from = 0;
        for (int i = 0; i < n; i++) {
            int to = i == n - 1 ? length : (int) ((long) length * (i + 1) / n);
            link.write(region, offset + from, Arrays.copyOfRange(data, from, to), to - from).await(waitPolicy);
            last = link.flush(stamp);
            last.await(waitPolicy);
            from = to;
        }
        return last;
    }

    /**
     * Returns once transaction {@code txId} (already durable) is applied to the backend's heap: ships the redo
     * buffer as {@code stores} synchronous WRITE+FLUSH round trips, then reads the control block until the
     * checkpoint passes {@code txId}; bounded by 30 s.
     */
    void writeThrough(long txId, int stores) {
        long deadline = System.nanoTime() + APPLY_WAIT_NANOS;
        boolean shipped = false;
        while (appliedTxId.getAsLong() < txId) {
            if (!shipped) {
                shipped = shipRedo.test(stores);
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
