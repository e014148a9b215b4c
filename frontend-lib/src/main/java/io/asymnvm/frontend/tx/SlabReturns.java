package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.SlabHeaderLayout;
import io.asymnvm.frontend.alloc.BlockAllocator;
import io.asymnvm.frontend.cache.PageCache;
import io.asymnvm.frontend.link.BackendLink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Gives slabs whose blocks are all free back to the backend (DESIGN §6), off the commit path: the engine's agent
 * calls {@link #doWork()}.
 *
 * <p><b>Why it is crash consistent.</b> A slab goes through four steps; the first three are DRAM only.
 * <ol>
 *   <li><em>Candidate.</em> A running attempt freed the slab's last block ({@link BlockAllocator}'s hint; the
 *       attempt may still be abandoned), or the slab was owned at attach (a previous incarnation may have emptied
 *       it and died before returning it). Nothing is decided yet.</li>
 *   <li><em>Retired</em>, under the execution lock, only if the slab's header in its latest committed image
 *       (the cached page, dirty or clean; if uncached, the backend's image, which is then current) counts no
 *       live block. The allocator stops allocating in it and refuses writes to it, so no transaction after
 *       {@code R}, the last transaction id posted at that moment, touches the slab: every write it will ever
 *       receive from this incarnation is in transactions up to {@code R}. Retiring is undone for free (a slab
 *       request takes a retired slab back into use before asking the backend for a grant, so a frontend at its
 *       quota keeps working and returns do not churn).</li>
 *   <li><em>Dropped</em>, only once the backend's {@code appliedTxId} is at least {@code R}: every transaction
 *       that wrote the slab is durable and applied, so (a) recovery, which re-executes only semantic records
 *       after {@code appliedTxId}, can never re-execute a transaction that allocated in or wrote to the slab,
 *       and (b) no redo for the slab is left to replay after it changes hands (the backend's replayer would
 *       refuse it). The slab leaves the allocator and its pages leave the cache (none is dirty: their writers are
 *       applied), which also outdates fetches in flight, so the cache never holds memory this frontend does
 *       not own.</li>
 *   <li><em>Returned</em> by the {@code RETURN_SLAB} control call. The backend refuses a slab the frontend does not
 *       own ({@code ACCESS_DENIED}), its first slab, or one whose header in PM counts live blocks, and records the
 *       return in the slab table durably before it replies. The next owner gets the slab zeroed by the backend at
 *       its grant.</li>
 * </ol>
 * A crash of the frontend before the backend persisted the return leaves the slab owned: the next incarnation
 * lists it at attach, probes it as a candidate and returns it. A crash after the persist, before the reply, leaves
 * it free: the attach reply no longer lists it, so the next incarnation never uses it. A lost reply within one
 * incarnation is resolved the same way: the call is sent again after reconnecting, and {@code ACCESS_DENIED} then
 * means the first request was recorded. A backend restart keeps the persisted table.
 *
 * <p>Threading: {@link #doWork()} runs on the agent thread; the other methods run under the execution lock.
 */
final class SlabReturns {
    private static final Logger LOG = LoggerFactory.getLogger(SlabReturns.class);
    private static final int PROBE_ATTEMPTS = 3;

    /** What the returner needs of its engine. */
    interface Engine {
        ReentrantLock exec();

        /** Held across a grant and across a return (before exec), see {@link #giveBack}. */
        ReentrantLock slabLock();

        PageCache cache();

        BlockAllocator allocator();

        BackendLink link();

        long lastPostedTxId();

        long appliedTxId();

        boolean idle();

        void recoverOrThrow(AsymNvmException e, long failedGeneration);
    }

    private final Engine engine;
    private final int frontendId;
    private final int pageSize;
    private final long slabPages;
    private final boolean enabled;
    private final Set<Long> candidates = ConcurrentHashMap.newKeySet();
    /** Retired slab index → the last transaction that may have written it. */
    private final Map<Long, Long> retiring = new ConcurrentHashMap<>();
    private final AtomicLong returned = new AtomicLong();
    private final AtomicLong roundTrips;

    SlabReturns(Engine engine, int frontendId, int pageSize, long slabPages, boolean enabled, AtomicLong roundTrips) {
        this.engine = engine;
        this.frontendId = frontendId;
        this.pageSize = pageSize;
        this.slabPages = slabPages;
        this.enabled = enabled;
        this.roundTrips = roundTrips;
    }

    /** Step 1: a slab that may be empty (the allocator's hint, or owned at attach). */
    void candidate(long slab) {
        if (enabled) {
            candidates.add(slab);
        }
    }

    /** Under the execution lock: a retired slab taken back into use instead of a grant, or -1. */
    long reuseRetired() {
        long slab = engine.allocator().anyRetired();
        if (slab >= 0) {
            retiring.remove(slab);
            engine.allocator().addSlab(slab);
        }
        return slab;
    }

    long returned() {
        return returned.get();
    }

    /** Whether nothing is waiting to be probed or returned. */
    boolean quiet() {
        return candidates.isEmpty() && retiring.isEmpty();
    }

    /** One pass: probes the candidates, returns the retired slabs whose writers are applied. The work done. */
    int doWork() {
        if (!enabled || quiet() || !engine.idle()) {
            return 0;
        }
        int work = probeCandidates();
        List<Long> due = new ArrayList<>();
        ReentrantLock exec = engine.exec();
        exec.lock();
        try {
            long applied = engine.appliedTxId();
            for (Map.Entry<Long, Long> e : retiring.entrySet()) {
                long slab = e.getKey();
                if (e.getValue() <= applied) {
                    retiring.remove(slab);
                    if (engine.allocator().dropRetired(slab)) { // step 3
                        engine.cache().invalidateRange(slab * slabPages, slabPages);
                        due.add(slab);
                    }
                }
            }
        } finally {
            exec.unlock();
        }
        for (long slab : due) {
            work += giveBack(slab);
        }
        return work;
    }

    /** Step 2 for every candidate; returns how many were retired. */
    int probeCandidates() {
        if (!enabled) {
            return 0;
        }
        int work = 0;
        for (Long slab : List.copyOf(candidates)) {
            candidates.remove(slab);
            work += probe(slab);
        }
        return work;
    }

    /** Step 2: retires the slab if its latest committed header counts no live block. */
    private int probe(long slab) {
        long page = slab * slabPages;
        byte[] fetched = null;
        long token = 0;
        ReentrantLock exec = engine.exec();
        for (int attempt = 0; attempt < PROBE_ATTEMPTS; attempt++) {
            exec.lock();
            try {
                BlockAllocator allocator = engine.allocator();
                if (!allocator.inUse(slab) || slab == allocator.firstSlab()) {
                    return 0;
                }
                PageCache cache = engine.cache();
                byte[] image = cache.peek(page);
                if (image == null && fetched != null && token == cache.fetchToken()) {
                    image = fetched; // uncached, hence not dirty, and no invalidation since: the backend's is current
                }
                if (image != null) {
                    ByteBuffer b = ByteBuffer.wrap(image).order(ByteOrder.LITTLE_ENDIAN);
                    if (b.getLong(SlabHeaderLayout.MAGIC_OFFSET) != SlabHeaderLayout.MAGIC
                            || b.getLong(SlabHeaderLayout.LIVE_OFFSET) != SlabHeaderLayout.LIVE_EMPTY) {
                        return 0;
                    }
                    allocator.retire(slab);
                    retiring.put(slab, engine.lastPostedTxId());
                    return 1;
                }
                token = cache.fetchToken();
            } finally {
                exec.unlock();
            }
            long generation = engine.link().generation();
            try {
                fetched = engine.link().read(RegionIds.HEAP, page * pageSize, SlabHeaderLayout.HEADER_LENGTH)
                        .await().bytes();
                roundTrips.incrementAndGet();
            } catch (AsymNvmException e) {
                engine.recoverOrThrow(e, generation);
                fetched = null;
            }
        }
        candidates.add(slab); // the cache kept moving: try again on the next pass
        return 0;
    }

    /** Step 4: the control call, sent again after a lost connection (see the class comment). */
    private int giveBack(long slab) {
        // no grant runs while a return is unresolved: if this return's reply is lost and a grant handed the slab
        // back to this frontend before the resend, the resend would free a slab in use again
        ReentrantLock slabLock = engine.slabLock();
        slabLock.lock();
        try {
            return giveBackLocked(slab);
        } finally {
            slabLock.unlock();
        }
    }

    private int giveBackLocked(long slab) {
        boolean sent = false;
        while (true) {
            long generation = engine.link().generation();
            try {
                engine.link().call(ControlMessageLayout.KIND_RETURN_SLAB, slab);
                roundTrips.incrementAndGet();
                returned.incrementAndGet();
                LOG.debug("frontend {} returned slab {}", frontendId, slab);
                return 1;
            } catch (AsymNvmException e) {
                if (e.errorCode() == ErrorCode.ACCESS_DENIED) {
                    if (sent) {
                        returned.incrementAndGet(); // the request whose reply was lost was recorded
                        return 1;
                    }
                    LOG.warn("frontend {}: slab {} is not this frontend's: {}", frontendId, slab, e.getMessage());
                    return 0; // never ours again: it stays dropped
                }
                if (e.errorCode() == ErrorCode.CONNECTION_LOST || e.errorCode() == ErrorCode.TIMEOUT) {
                    sent = true;
                    engine.recoverOrThrow(e, generation);
                    continue;
                }
                LOG.warn("frontend {}: the backend refused the return of slab {}, keeping it: {}", frontendId, slab,
                        e.getMessage());
                ReentrantLock exec = engine.exec();
                exec.lock();
                try {
                    engine.cache().invalidateRange(slab * slabPages, slabPages);
                    engine.allocator().addSlab(slab);
                } finally {
                    exec.unlock();
                }
                return 0;
            }
        }
    }
}
