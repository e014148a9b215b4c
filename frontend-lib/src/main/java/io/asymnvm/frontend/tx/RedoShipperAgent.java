package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.frontend.CacheIncoherentException;
import io.asymnvm.frontend.link.MirrorLinks;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The redo shipper, the frontend's agent (the counterpart of the backend's {@code ReplayAgent}): a duty cycle
 * ({@link #doWork()}) on its own thread that ships the redo buffer as whole batches by age (count, bytes and ring
 * pressure ship from the commit path, {@link #shipRedo()}), FLUSHes ASYNC commits, polls the backend's (and
 * every SYNC mirror's) published checkpoint to release ring space and unpin pages, returns empty slabs and keeps
 * an idle session alive. Redo is off the commit path: a commit never waits for it.
 *
 * <p>Threads: the agent thread; {@code shipRedo} and {@code learnApplied} also from committers, under
 * {@code exec}.
 */
final class RedoShipperAgent implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(RedoShipperAgent.class);

    private final TransactionEngine engine;
    private final long pollNanos;
    private final long redoDelayNanos;
    private final long asyncNanos;
    private final long keepAliveNanos;
    private long lastPoll;
    private long lastKeepAlive = System.nanoTime();
    private long lastAsyncFlush = System.nanoTime();

    RedoShipperAgent(TransactionEngine engine) {
        this.engine = engine;
        this.pollNanos = TimeUnit.MICROSECONDS.toNanos(engine.options.pollIntervalMicros());
        this.redoDelayNanos = TimeUnit.MICROSECONDS.toNanos(engine.options.redoMaxDelayMicros());
        this.asyncNanos = TimeUnit.MICROSECONDS.toNanos(engine.options.asyncFlushMicros());
        this.keepAliveNanos = TimeUnit.MILLISECONDS.toNanos(engine.options.keepAliveMillis());
    }

    /** Posts the pending redo batch if the redo ring has room; under the lock. */
    boolean shipRedo() {
        if (engine.redo.isEmpty()) {
            return true;
        }
        int length = engine.redo.alignedLength();
        if (!engine.redoRing.fits(length)) {
            return false;
        }
        engine.redoRing.append(engine.link, length, engine.redo::seal, engine.redo.lastTxId());
        engine.redoBatches.incrementAndGet();
        return true;
    }

    /**
     * Naive mode: ships the pending redo batch under the execution lock as {@code stores} synchronous WRITE+FLUSH
     * round trips, one per store of the transaction (see {@link NaiveAccess}); false if the ring has no room.
     */
    boolean shipRedoPerStore(int stores) {
        engine.exec.lock();
        try {
            if (engine.redo.isEmpty()) {
                return true;
            }
            int length = engine.redo.alignedLength();
            if (!engine.redoRing.fits(length)) {
                return false;
            }
            long stamp = engine.posted.semEnd(); // already durable: the FLUSHes persist the redo pieces, nothing more
            engine.redoRing.append(
                    (region, offset, data, n) -> engine.naive.postInPieces(region, offset, data, n, stores, stamp),
                    length, engine.redo::seal, engine.redo.lastTxId());
            engine.redoBatches.incrementAndGet();
            return true;
        } finally {
            engine.exec.unlock();
        }
    }

    void awaitRingSpace() {
        long start = System.nanoTime();
        long appliedBefore = engine.releasedTxId;
        while (System.nanoTime() - start < TransactionEngine.SPACE_WAIT_NANOS) {
            engine.exec.lock();
            try {
                shipRedo();
            } finally {
                engine.exec.unlock();
            }
            if (engine.posted.txId() > engine.durableTxId) {
                engine.commit.awaitDurable(engine.posted.txId(), engine.controlRoundTrips);
            }
            pollApplied(false);
            if (engine.releasedTxId > appliedBefore || engine.posted.txId() == engine.releasedTxId) {
                return;
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(engine.options.pollIntervalMicros()));
        }
        throw new AsymNvmException(ErrorCode.NO_SPACE, "log rings of frontend " + engine.frontendId
                + " full and the backend applied nothing for "
                        + TimeUnit.NANOSECONDS.toMillis(TransactionEngine.SPACE_WAIT_NANOS)
                + " ms (applied tx " + engine.appliedTxId + ", released tx " + engine.releasedTxId
                        + (engine.mirrors == null ? ""
                : " over the backend and SYNC mirrors " + engine.mirrors.endpoints()) + ", last tx "
                        + engine.posted.txId() + ")");
    }

    /** Under the exec lock: the backend applied up to {@code applied}; release ring space and unpin pages. */
    void learnApplied(long applied, long semHead, long redoHead) {
        if (applied < engine.appliedTxId) {
            return;
        }
        engine.appliedTxId = applied;
        if (engine.mirrors == null) {
            engine.releasedTxId = applied;
            engine.semRing.release(applied, semHead);
            engine.redoRing.release(applied, redoHead);
            if (applied > engine.durableTxId) {
                engine.commit.advanceDurable(applied);
            }
        } else {
            engine.backendSemHead = Math.max(engine.backendSemHead, semHead);
            engine.backendRedoHead = Math.max(engine.backendRedoHead, redoHead);
            engine.mirrorFailover.releaseAtMin();
        }
        engine.cache.unpin(applied, engine.options.verifyCache() ? engine.toVerify::add : null);
    }

    /** Reads the control block (one round trip) and learns the backend's checkpoint. */
    void pollApplied(boolean background) {
        long generation = engine.link.generation();
        byte[] block;
        try {
            block = engine.link.read(RegionIds.control(engine.frontendId), 0,
                    ControlBlockLayout.READ_LENGTH).await().bytes();
        } catch (AsymNvmException e) {
            engine.recovery.recoverOrThrow(e, generation);
            return;
        }
        (background ? engine.backgroundRoundTrips : engine.controlRoundTrips).incrementAndGet();
        // only a durable checkpoint releases ring space: a newer slot may be visible before it is persisted
        ControlBlockLayout.Checkpoint cp = ControlBlockLayout.publishedCheckpoint(block);
        if (cp.appliedTxId() > engine.appliedTxId) {
            engine.exec.lock();
            try {
                learnApplied(cp.appliedTxId(), cp.semHead(), cp.redoHead());
            } finally {
                engine.exec.unlock();
            }
        }
        if (engine.mirrors != null) {
            engine.mirrorFailover.pollMirrors(background);
        }
        engine.coherence.verifyCheckpointed();
    }

    /** The agent's thread: {@link #doWork()} until the engine stops, parking between passes. */
    @Override
    public void run() {
        long park = Math.min(pollNanos, redoDelayNanos) / 2;
        while (engine.running) {
            try {
                doWork();
                LockSupport.parkNanos(park);
            } catch (CacheIncoherentException e) {
                LOG.error("frontend {} stopped: {}", engine.frontendId, e.getMessage());
                return;
            } catch (Superseded s) {
                return; // a failover: the successor's agent serves this frontend
            } catch (AsymNvmException e) {
                if (engine.fatal != null || !engine.running) {
                    return; // abandoned, fenced or closing: nothing to report
                }
                LOG.error("frontend {} background agent: {}", engine.frontendId, e.getMessage());
            } catch (RuntimeException e) {
                LOG.error("frontend {} background agent failed", engine.frontendId, e);
            }
        }
    }

    /**
     * One duty cycle: ship a redo batch that is old enough, FLUSH for ASYNC commits, poll the backend's
     * checkpoint, return empty slabs, keep the session alive. Returns the number of those that did something.
     */
    int doWork() {
        int work = 0;
        long now = System.nanoTime();
        if (engine.exec.tryLock()) {
            try {
                if (!engine.redo.isEmpty() && now - engine.redo.oldestNanos() >= redoDelayNanos) {
                    shipRedo();
                    work++;
                }
            } finally {
                engine.exec.unlock();
            }
        }
        if (engine.lastAsyncTxId > engine.durableTxId && now - lastAsyncFlush >= asyncNanos) {
            lastAsyncFlush = now;
            engine.commit.awaitDurable(engine.lastAsyncTxId, engine.backgroundRoundTrips);
            work++;
        }
        if (engine.posted.txId() > engine.releasedTxId && now - lastPoll >= pollNanos) {
            lastPoll = now;
            pollApplied(true);
            work++;
        }
        work += engine.slabReturns.doWork();
        if (keepAliveNanos > 0 && now - lastKeepAlive >= keepAliveNanos) {
            lastKeepAlive = now;
            keepAlive();
            work++;
        }
        return work;
    }

    /**
     * Traffic for the backend's idle timeout: one READ posted and not awaited. A failure is left to the next real
     * operation, which reconnects; an idle frontend never becomes unusable because of a keep-alive.
     */
    void keepAlive() {
        try {
            engine.link.read(RegionIds.control(engine.frontendId), 0, ControlBlockLayout.READ_LENGTH);
        } catch (RuntimeException notConnected) {
            // reconnecting or closed: nothing to keep alive
        }
        if (engine.mirrors != null) {
            for (MirrorLinks.Mirror m : engine.mirrors.active()) {
                try {
                    m.link().read(RegionIds.control(engine.frontendId), 0, ControlBlockLayout.READ_LENGTH);
                } catch (RuntimeException notConnected) {
                    // the next commit reconnects it
                }
            }
        }
    }

    /**
     * Ships and waits until everything posted is durable and applied at the backend ({@code sync()}); in the
     * coherence check mode, then compares every clean page with the backend.
     */
    void drain() {
        long deadline = System.nanoTime() + TransactionEngine.SPACE_WAIT_NANOS;
        while (true) {
            engine.checkUsable();
            engine.exec.lock();
            boolean shipped;
            try {
                shipped = shipRedo();
            } finally {
                engine.exec.unlock();
            }
            long last = engine.posted.txId();
            engine.commit.awaitDurable(last, engine.controlRoundTrips);
            pollApplied(false);
            if (shipped && engine.appliedTxId >= last) {
                engine.coherence.sweep();
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AsymNvmException(ErrorCode.TIMEOUT, "backend did not apply transactions up to " + last
                        + " (applied " + engine.appliedTxId + ")");
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(engine.options.pollIntervalMicros()));
        }
    }
}
