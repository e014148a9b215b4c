package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.frontend.alloc.BlockAllocator;
import io.asymnvm.frontend.cache.PageCache;
import io.asymnvm.frontend.link.BackendLink;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Slab grants (DESIGN §6): asks the backend for a slab when the allocator has no room (outside {@code exec},
 * under {@code slabLock}), taking a retired slab of this frontend back into use first, and at the quota one that
 * just emptied. A granted slab is installed in one change of the cache sequence with everything cached of it
 * dropped.
 *
 * <p>It is also what {@link SlabReturns} sees of the engine.
 *
 * <p>Threads: caller threads between attempts.
 */
final class SlabGrants implements SlabReturns.Engine {

    private final TransactionEngine engine;

    SlabGrants(TransactionEngine engine) {
        this.engine = engine;
    }

    void grantSlab() {
        engine.slabLock.lock();
        try {
            grantSlabLocked();
        } finally {
            engine.slabLock.unlock();
        }
    }

    void grantSlabLocked() {
        engine.exec.lock();
        try {
            if (engine.slabReturns.reuseRetired() >= 0) {
                return; // a slab on its way back is taken into use again: no grant, no round trip
            }
        } finally {
            engine.exec.unlock();
        }
        while (true) {
            long generation = engine.link.generation();
            try {
                byte[] r = engine.link.call(ControlMessageLayout.KIND_GRANT_SLAB, 0);
                engine.controlRoundTrips.incrementAndGet();
                long slab = ByteBuffer.wrap(r).order(ByteOrder.LITTLE_ENDIAN).getLong();
                engine.exec.lock();
                try {
                    // ownership changes: nothing cached of the slab survives, no fetch in flight installs a page
                    // of it read before the grant initialised its header (PageCache's coherence invariant)
                    engine.cache.sequence().beginChange(); // one section: lockless readers see both or re-run
                    try {
                        engine.cache.invalidateRange(slab * engine.slabPages, engine.slabPages);
                        engine.allocator.addSlab(slab);
                    } finally {
                        engine.cache.sequence().endChange();
                    }
                    engine.slabGrants.incrementAndGet();
                } finally {
                    engine.exec.unlock();
                }
                return;
            } catch (AsymNvmException e) {
                if (e.errorCode() == ErrorCode.QUOTA_EXCEEDED && reuseEmptied()) {
                    return; // at the quota, a slab this frontend just emptied is used again instead
                }
                engine.recovery.recoverOrThrow(e, generation);
            }
        }
    }

    /** Probes the slabs that may have just emptied and takes one back into use; false if none is empty. */
    boolean reuseEmptied() {
        engine.slabReturns.probeCandidates();
        engine.exec.lock();
        try {
            return engine.slabReturns.reuseRetired() >= 0;
        } finally {
            engine.exec.unlock();
        }
    }

    // --- what SlabReturns sees of the engine ---

    @Override
    public ReentrantLock exec() {
        return engine.exec;
    }

    @Override
    public ReentrantLock slabLock() {
        return engine.slabLock;
    }

    @Override
    public PageCache cache() {
        return engine.cache;
    }

    @Override
    public BlockAllocator allocator() {
        return engine.allocator;
    }

    @Override
    public BackendLink link() {
        return engine.link;
    }

    @Override
    public long lastPostedTxId() {
        return engine.posted.txId();
    }

    @Override
    public long appliedTxId() {
        return engine.appliedTxId;
    }

    @Override
    public boolean idle() {
        return engine.pendingRecovery == null && engine.fatal == null && engine.running;
    }

    @Override
    public void recoverOrThrow(AsymNvmException e, long failedGeneration) {
        engine.recovery.recoverOrThrow(e, failedGeneration);
    }
}
