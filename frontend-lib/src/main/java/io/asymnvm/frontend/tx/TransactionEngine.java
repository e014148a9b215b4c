package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.WaitPolicy;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.alloc.BlockAllocator;
import io.asymnvm.frontend.cache.PageCache;
import io.asymnvm.frontend.link.BackendLink;
import io.asymnvm.frontend.link.MirrorLinks;
import io.asymnvm.frontend.link.RingWriter;
import io.asymnvm.frontend.log.RedoBuffer;
import io.asymnvm.frontend.log.RingAppender;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The commit protocol of DESIGN §2, frontend side: one engine per attached frontend. It holds the state its roles
 * share (the link, page cache, rings, redo buffer, allocator, watermarks, counters and locks) and the public calls;
 * the work is done by the roles:
 * <ul>
 *   <li>{@link Executor}: runs method bodies attempt after attempt. Under the execution lock {@code exec} a body
 *       runs against a {@link TransactionContext} (reads through the page cache, writes into a private write set);
 *       what needs the network abandons the attempt with a {@link RetrySignal}, is done outside the lock, and the
 *       method runs again, so the lock is never held across a round trip and methods must be deterministic.
 *       Read-only calls may run without the lock ({@link LocklessReads}), and so may the bodies of writers,
 *       validated against per-page versions under the lock before they commit ({@link OptimisticWriters}).</li>
 *   <li>{@link CommitPipeline}: a finished attempt gets the next transaction id, its semantic record is posted as
 *       a one-sided WRITE at the ring tail (ids and ring order are the serialization order), its pages become
 *       dirty cache pages and its writes go to the redo buffer, then the lock is released (early lock release).
 *       A SYNC caller waits for a FLUSH posted after its record, shared by every record before it (group
 *       commit); a read-only call waits for the durability of the newest unapplied write it read.</li>
 *   <li>{@link RedoShipperAgent}: the agent thread's duty cycle. Redo goes to the backend as whole batches off the
 *       commit path; checkpoints are polled to release ring space and unpin pages.</li>
 *   <li>{@link Recovery}: re-execution of the semantic records a previous incarnation left (DESIGN §4), and
 *       reconnection with re-posting of every retained record after a lost connection.</li>
 *   <li>{@link PageFetcher} (with the per-call {@link CallPages}), {@link SlabGrants}, {@link CoherenceCheck}: page
 *       misses, slab grants, the coherence check mode.</li>
 *   <li>{@link EngineLifecycle}: the clean detach, the crash-like abandon, and the check every public call makes
 *       first (superseded, backend lost, closed); {@link EngineStats#of} assembles the counters.</li>
 *   <li>{@link MirrorFailover} (issue 9, with {@link MirrorLinks} and {@link Failover}): SYNC mirrors get every
 *       semantic record at the same position and every FLUSH in parallel; an unreachable backend is replaced by a
 *       promoted mirror and this engine is superseded by a new one attached to it. Without mirrors nothing of it
 *       runs.</li>
 * </ul>
 *
 * <p>Lock order: {@code slabLock}, {@code verifyLock}, {@code flushLock}, then {@code exec}; the durable
 * watermark has its own leaf lock.
 */
public final class TransactionEngine implements AutoCloseable {
    static final long SPACE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

    record Mark(long txId, long semEnd) {
    }

    final BackendLink link;
    final FrontendOptions options;
    /** How commit waits and page reads wait for their round trip (FrontendOptions.waitPolicy). */
    final WaitPolicy waitPolicy;
    /** Group commit combines FLUSHes (FrontendOptions.combineFlushes; see awaitDurable). */
    final boolean combineFlushes;
    final MethodRegistry registry;
    final ArgumentCodec codec;
    volatile AttachReply pendingRecovery;
    volatile RecoveryReport lastRecovery;
    final int frontendId;
    final ReentrantLock exec = new ReentrantLock();
    /**
     * Held across a slab grant and across a slab return (taken before {@link #exec}, never while holding it), so
     * a return whose reply was lost is resolved before any grant can hand the same slab back to this frontend.
     */
    final ReentrantLock slabLock = new ReentrantLock();
    final Object flushLock = new Object();
    final Object durableLock = new Object();
    final PageCache cache;
    final RingAppender semRing;
    final RingAppender redoRing;
    final RedoBuffer redo;
    final BlockAllocator allocator;
    final long heapSize;
    final int pageSize;
    final long slabPages;
    /** Pages that became clean at a checkpoint and await comparison with the backend (coherence check mode). */
    final java.util.ArrayDeque<Long> toVerify = new java.util.ArrayDeque<>();
    /** Serialises the coherence checks of checkpoints and sweeps (lock order: before {@code exec}). */
    final Object verifyLock = new Object();
    final int maxArgumentBytes;
    final Thread agent;

    long nextTxId;
    volatile Mark posted;
    volatile long durableTxId;
    volatile long lastAsyncTxId;
    volatile long appliedTxId;
    Completion inflight;
    long inflightCovers;
    long inflightGeneration;
    volatile boolean running = true;
    volatile AsymNvmException fatal;

    final AtomicLong commits = new AtomicLong();
    final AtomicLong readOnly = new AtomicLong();
    final AtomicLong aborts = new AtomicLong();
    final AtomicLong retries = new AtomicLong();
    final AtomicLong commitRoundTrips = new AtomicLong();
    final AtomicLong fetchRoundTrips = new AtomicLong();
    final AtomicLong controlRoundTrips = new AtomicLong();
    final AtomicLong backgroundRoundTrips = new AtomicLong();
    final AtomicLong redoBatches = new AtomicLong();
    final AtomicLong reconnects = new AtomicLong();
    final AtomicLong slabGrants = new AtomicLong();
    /** Attempts per call, as a distribution (issue 8 goal 4). */
    final RunCounts runCounts = new RunCounts();
    // --- the roles (this class holds their shared state and the public calls) ---
    final Executor executor = new Executor(this);
    final CommitPipeline commit = new CommitPipeline(this);
    final Recovery recovery = new Recovery(this);
    final RedoShipperAgent shipper;
    final PageFetcher fetcher = new PageFetcher(this);
    final CoherenceCheck coherence = new CoherenceCheck(this);
    final SlabGrants slabs = new SlabGrants(this);
    final MirrorFailover mirrorFailover = new MirrorFailover(this);
    final LocklessReads readers = new LocklessReads(this, executor);
    final OptimisticWriters writers = new OptimisticWriters(this, executor);
    final EngineLifecycle lifecycle = new EngineLifecycle(this);
    final SlabReturns slabReturns;
    /** The naive baseline's data path, or null in the design's mode (issue 8 goal 6; see {@link NaiveAccess}). */
    final NaiveAccess naive;

    /** Reads made only by the coherence check mode; kept out of every other count. */
    final AtomicLong verifyReads = new AtomicLong();

    // --- SYNC mirrors and failover (issue 9); mirrors is null without mirrors ---
    /** Null until the first mirror (at open or {@link #addMirror}); then never null again. */
    volatile MirrorLinks mirrors;
    /** Where semantic records go: the backend's link, or the backend and every mirror. */
    volatile RingWriter semWriter;
    /** The backend's first attach reply: image and geometry a mirror added later must match. */
    final AttachReply backendAttach;
    final Failover failover;
    MirrorLinks.Flush inflightMirrors;
    /** The oldest checkpoint over the backend and every mirror: ring space is released up to it. */
    volatile long releasedTxId;
    /**
     * The posting epoch this frontend last raised on the backend by dropping a SYNC mirror (0: never), see
     * {@link io.asymnvm.core.layout.PostingEpoch}; it counts only while its attach epoch is the link's.
     */
    volatile long raisedPostingEpoch;

    /** The posting epoch this frontend declares its SYNC mirrors under (MIRROR_POSTING). */
    long postingEpoch() {
        long attach = link.attachEpoch();
        long raised = raisedPostingEpoch;
        return raised != 0 && io.asymnvm.core.layout.PostingEpoch.attachEpoch(raised) == attach ? raised : attach;
    }
    long backendSemHead;
    long backendRedoHead;
    /** The engine serving this frontend since a failover; this one then only redirects. */
    volatile TransactionEngine successor;

    /**
     * Attaches through {@code link} and starts the background agent. If the previous incarnation of this frontend
     * left semantic records after the backend's last applied transaction, they are re-executed by
     * {@link #recover()} before the first new transaction runs.
     */
    public TransactionEngine(BackendLink link, FrontendOptions options, MethodRegistry registry) {
        this(link, null, options, registry, new Failover(null));
    }

    /**
     * With SYNC {@code mirrors} (null or empty: none), attached here after the backend and checked against it,
     * and the frontend's {@code failover} state (shared with the engines that succeed this one).
     */
    public TransactionEngine(BackendLink link, MirrorLinks mirrors, FrontendOptions options, MethodRegistry registry,
                             Failover failover) {
        this.link = link;
        this.failover = failover;
        this.options = options;
        this.waitPolicy = WaitPolicy.of(options.waitPolicy());
        this.combineFlushes = options.combineFlushes();
        this.registry = registry;
        this.codec = new ArgumentCodec(registry.argumentClasses());
        this.frontendId = link.frontendId();
        AttachReply r = link.open();
        this.backendAttach = r;
        mirrorFailover.open(mirrors, r);
        this.backendSemHead = r.semHead();
        this.backendRedoHead = r.redoHead();
        boolean recovering = r.lastSemTxId() > r.appliedTxId();
        this.pendingRecovery = recovering ? r : null;
        this.pageSize = r.pageSize();
        this.heapSize = r.heapSize();
        long semStart = recovering ? r.semHead() : r.semValidTail();
        this.semRing = new RingAppender(RegionIds.semantic(frontendId), r.semCapacity(), semStart,
                this.mirrors == null ? r.semHead() : this.mirrors.minSemHead(r.semHead()));
        this.redoRing = new RingAppender(RegionIds.redo(frontendId), r.redoCapacity(), r.redoValidTail(),
                this.mirrors == null ? r.redoHead() : this.mirrors.minRedoHead(r.redoHead()));
        this.releasedTxId = this.mirrors == null ? r.appliedTxId() : this.mirrors.minApplied(r.appliedTxId());
        int maxBatch = (int) Math.min(options.redoBatchBytes(), r.redoCapacity() / 4);
        this.redo = new RedoBuffer(maxBatch);
        this.maxArgumentBytes = (int) Math.min(1 << 20, r.semCapacity() / 4) - SemanticRecordLayout.HEADER_LENGTH;
        this.slabPages = r.slabSize() / pageSize;
        this.slabReturns = new SlabReturns(slabs, frontendId, pageSize, slabPages,
                options.returnEmptySlabs(), backgroundRoundTrips);
        this.allocator = new BlockAllocator(r.slabSize(), r.ownedSlabs(), () -> {
            throw TransactionContext.current().needSlab();
        }, slabReturns::candidate);
        for (long s : r.ownedSlabs()) {
            if (s != allocator.firstSlab()) {
                slabReturns.candidate(s); // a previous incarnation may have emptied it and died before returning it
            }
        }
        this.cache = new PageCache(pageSize, options.cacheBytes(),
                p -> allocator.cacheable(p * pageSize, pageSize));
        this.nextTxId = r.appliedTxId() + 1;
        this.appliedTxId = r.appliedTxId();
        this.durableTxId = r.appliedTxId();
        this.posted = new Mark(r.appliedTxId(), semStart);
        this.shipper = new RedoShipperAgent(this);
        this.naive = options.mode() != io.asymnvm.frontend.ExecutionMode.NAIVE ? null
                : new NaiveAccess(link, pageSize, waitPolicy, fetchRoundTrips, shipper::shipRedoPerStore,
                        () -> shipper.pollApplied(false), () -> appliedTxId);
        this.agent = new Thread(shipper, "asymnvm-frontend-" + frontendId);
        agent.setDaemon(true);
        agent.start();
        if (!recovering) {
            // nothing of this incarnation is posted yet: every record will go to every mirror
            mirrorFailover.declareMirrors();
        }
    }

    /** The naive baseline's data path, or null (the design's mode). */
    NaiveAccess naive() {
        return naive;
    }

    PageCache cache() {
        return cache;
    }

    BlockAllocator allocator() {
        return allocator;
    }

    public int frontendId() {
        return frontendId;
    }

    void checkReadable(long address, long length) {
        if (address < 0 || length < 0 || address > heapSize - length) {
            throw new IllegalArgumentException("heap range [" + address + ", " + (address + length)
                    + ") outside the heap of " + heapSize + " bytes");
        }
    }

    void checkWritable(long address, long length) {
        checkReadable(address, length);
        if (!allocator.owns(address, length)) {
            throw new IllegalArgumentException("write to heap range [" + address + ", " + (address + length)
                    + ") outside the slabs granted to frontend " + frontendId);
        }
    }

    /**
     * Runs one transactional call to completion (or abort). User exceptions are rethrown unchanged after the
     * transaction was discarded.
     */
    public Object execute(MethodRegistry.Entry entry, Object[] args) throws Throwable {
        TransactionEngine e = this;
        while (true) {
            try {
                return e.executeHere(entry, args);
            } catch (Superseded s) {
                e = s.next; // not logged here: the call runs on the engine of the promoted mirror
            }
        }
    }

    /** The engine serving this frontend now: this one, or the one that took over at the last failover. */
    public TransactionEngine current() {
        TransactionEngine e = this;
        while (e.successor != null) {
            e = e.successor;
        }
        return e;
    }

    /** The frontend this engine serves, the same object for an engine and its successors. */
    public Object lineage() {
        return failover;
    }

    private Object executeHere(MethodRegistry.Entry entry, Object[] args) throws Throwable {
        checkUsable();
        if (pendingRecovery != null) {
            recovery.recover();
        }
        return executor.run(entry, args, null);
    }

    /**
     * Frontend recovery (DESIGN §4): re-executes, in order and with their original transaction ids, the
     * semantic records this frontend's previous incarnation left after the backend's last applied transaction.
     * Runs automatically before the first new transaction; call it directly to recover eagerly. See
     * {@link Recovery#recover()}.
     */
    public RecoveryReport recover() {
        return recovery.recover();
    }

    /** What {@link #recover()} did: how many transactions it re-executed, their ids, and how long it took. */
    public record RecoveryReport(int transactions, long firstTxId, long lastTxId, long millis) {
        /** Nothing was pending: no transaction re-executed. */
        public static final RecoveryReport NOTHING = new RecoveryReport(0, 0, 0, 0);
    }

    /** Lockless: a page preference met without the lock, applied by the next holder of {@code exec}. */
    void deferPreference(long pageIndex) {
        readers.defer(pageIndex);
    }

    /**
     * One pass of slab returns now (the agent makes them on its own, lazily): probes the slabs that may be empty
     * and returns those whose last writer the backend has applied. Returns the work done.
     */
    public int returnEmptySlabs() {
        try {
            checkUsable();
            return slabReturns.doWork();
        } catch (Superseded s) {
            return s.next.returnEmptySlabs();
        }
    }

    /** A control call outside any transaction (catalog), reconnecting like every other caller. */
    public byte[] controlCall(byte[] request) {
        try {
            return recovery.controlCall(request);
        } catch (Superseded s) {
            return s.next.controlCall(request);
        }
    }

    /** Throws if this engine may not serve a call: superseded, backend lost or closed ({@link EngineLifecycle}). */
    void checkUsable() {
        lifecycle.checkUsable();
    }

    /** Makes everything durable and applied at the backend. */
    public void sync() {
        try {
            shipper.drain();
        } catch (Superseded s) {
            s.next.sync();
        }
    }

    public EngineStats stats() {
        return EngineStats.of(this);
    }

    /** How long optimistic writers held and waited for the execution lock at commit (counted afresh after a failover). */
    public CommitSections.Snapshot commitSections() {
        return writers.sections().snapshot();
    }

    /** How many attempts each call took since this engine attached (its successor counts afresh). */
    public RunCounts.Snapshot runCounts() {
        return runCounts.snapshot();
    }

    public io.asymnvm.core.fabric.FabricCounters.Snapshot counters() {
        return link.counters();
    }

    /** Clean detach: ship and apply everything, stop the agent, tell the backend, close the connection. */
    @Override
    public void close() {
        lifecycle.close();
    }

    /** Stops without flushing or detaching, as a crash would (tests and drills). */
    public void abandon() {
        lifecycle.abandon();
    }

    /**
     * Removes the SYNC mirror {@code endpoint} from this frontend's in-sync set (an operator or the cluster
     * layer decided it is gone): commits stop waiting for it, a reconnect to it in progress is cancelled, and
     * ring space is no longer held for it.
     */
    public void dropMirror(String endpoint) {
        TransactionEngine e = current();
        if (e.mirrors == null) {
            throw new IllegalArgumentException("frontend " + frontendId + " has no SYNC mirror to drop (asked: "
                    + endpoint + ")");
        }
        e.mirrorFailover.drop(endpoint);
    }

    /**
     * Adds the SYNC mirror reached through {@code mirrorLink} while this frontend runs (issue 9): attaches to it
     * (checked like a mirror given at open), then, under {@code flushLock} and the execution lock, so that no
     * commit is posted in between, re-posts every retained semantic record at its ring position and adds it to
     * the set the semantic writer posts to; then FLUSHes it and declares it SYNC (MIRROR_POSTING), after which
     * commits are acknowledged only once durable on it too. See {@link MirrorAdd}.
     */
    public void addMirror(BackendLink mirrorLink) {
        MirrorAdd.add(current(), mirrorLink);
    }

    /** The endpoints of the SYNC mirrors in sync now (empty without mirrors). */
    public List<String> mirrorEndpoints() {
        TransactionEngine e = current();
        return e.mirrors == null ? List.of() : e.mirrors.endpoints();
    }
}
