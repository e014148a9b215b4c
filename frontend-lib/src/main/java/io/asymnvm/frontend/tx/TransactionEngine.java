package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.WaitPolicy;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.frontend.CacheIncoherentException;
import io.asymnvm.frontend.Durability;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.alloc.BlockAllocator;
import io.asymnvm.frontend.cache.PageCache;
import io.asymnvm.frontend.link.BackendLink;
import io.asymnvm.frontend.link.MirrorLinks;
import io.asymnvm.frontend.link.RingWriter;
import io.asymnvm.frontend.log.RedoBuffer;
import io.asymnvm.frontend.log.RingAppender;
import io.asymnvm.recovery.semantic.SemanticLogReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.reflect.InvocationTargetException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The commit protocol of DESIGN §2, frontend side.
 *
 * <p><b>Execute.</b> Under the execution lock the method body runs against a {@link TransactionContext}: reads
 * through the page cache, writes into a private write set. Anything that needs the network (a page miss, a new
 * slab, ring space) abandons the attempt with a {@link RetrySignal}; the lock is released, the work is done, and
 * the method runs again. So the execution lock is never held across a round trip, and annotated methods must
 * be deterministic (they may run several times).
 *
 * <p><b>Order and log.</b> A finished attempt gets the next transaction id, its semantic record is posted as a
 * one-sided WRITE at the tail of the semantic ring (ids and ring order are the serialization order), its page
 * images are installed in the cache as dirty (pinned) pages, its writes are appended to the redo buffer, and the
 * lock is released (early lock release).
 *
 * <p><b>Commit point.</b> A SYNC caller then waits for a FLUSH posted after its record: one round trip, shared
 * by every transaction whose record was posted before that FLUSH (group commit). The FLUSH carries the semantic
 * ring position it covers, which the backend stamps durably as the ring's durable watermark. A read-only
 * transaction waits for the durability of the newest unapplied write it read, so it never returns state that a
 * crash could take back.
 *
 * <p><b>Redo off the commit path.</b> Redo is shipped as whole batches by count, bytes, age (agent thread) or
 * ring pressure. Every record not yet applied by the backend is retained in DRAM, so a backend restart is
 * survived by reconnecting and writing them again at the same positions (the backend re-reads both rings).
 *
 * <p><b>SYNC mirrors</b> (issue 9; {@link MirrorLinks}, {@link Failover}). Each semantic record is posted to the
 * backend and every mirror at the same position, each durability wait FLUSHes all of them in parallel and returns
 * only when all completed (one round-trip time), and ring space is released at the minimum checkpoint over all of
 * them. An unreachable mirror is reconnected (and its ring re-posted) while commits wait, until the mirror
 * reconnect timeout or until it is dropped. An unreachable backend is replaced by a promoted mirror: the engine is
 * superseded by a new one attached to it, and calls are redirected. Without mirrors none of this runs: the same
 * objects, writes and FLUSHes as before.
 *
 * <p><b>Lockless reads</b> (issue 8; {@link LocklessReads}). A method that ran read-only last time runs without
 * {@code exec}, validated against the page cache's change sequence; every change of the cache's contents
 * (installing a write set, invalidation) is a section of that sequence, made under {@code exec}.
 *
 * <p>Lock order: {@code flushLock} before {@code exec}.
 */
public final class TransactionEngine implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TransactionEngine.class);
    private static final long SPACE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

    private record Mark(long txId, long semEnd) {
    }

    private final BackendLink link;
    private final FrontendOptions options;
    /** How commit waits and page reads wait for their round trip (FrontendOptions.waitPolicy). */
    private final WaitPolicy waitPolicy;
    /** Group commit combines FLUSHes (FrontendOptions.combineFlushes; see awaitDurable). */
    private final boolean combineFlushes;
    private final MethodRegistry registry;
    private final ArgumentCodec codec;
    private volatile AttachReply pendingRecovery;
    private volatile RecoveryReport lastRecovery;
    private final int frontendId;
    private final ReentrantLock exec = new ReentrantLock();
    /**
     * Held across a slab grant and across a slab return (taken before {@link #exec}, never while holding it), so
     * a return whose reply was lost is resolved before any grant can hand the same slab back to this frontend.
     */
    private final ReentrantLock slabLock = new ReentrantLock();
    private final Object flushLock = new Object();
    private final Object durableLock = new Object();
    private final PageCache cache;
    private final RingAppender semRing;
    private final RingAppender redoRing;
    private final RedoBuffer redo;
    private final BlockAllocator allocator;
    private final long heapSize;
    private final int pageSize;
    private final long slabPages;
    /** Pages that became clean at a checkpoint and await comparison with the backend (coherence check mode). */
    private final java.util.ArrayDeque<Long> toVerify = new java.util.ArrayDeque<>();
    /** Serialises the coherence checks of checkpoints and sweeps (lock order: before {@code exec}). */
    private final Object verifyLock = new Object();
    private final int maxArgumentBytes;
    private final Thread agent;

    private long nextTxId;
    private volatile Mark posted;
    private volatile long durableTxId;
    private volatile long lastAsyncTxId;
    private volatile long appliedTxId;
    private Completion inflight;
    private long inflightCovers;
    private long inflightGeneration;
    private volatile boolean running = true;
    private volatile AsymNvmException fatal;

    private final AtomicLong commits = new AtomicLong();
    private final AtomicLong readOnly = new AtomicLong();
    private final AtomicLong aborts = new AtomicLong();
    private final AtomicLong retries = new AtomicLong();
    private final AtomicLong commitRoundTrips = new AtomicLong();
    private final AtomicLong fetchRoundTrips = new AtomicLong();
    private final AtomicLong controlRoundTrips = new AtomicLong();
    private final AtomicLong backgroundRoundTrips = new AtomicLong();
    private final AtomicLong redoBatches = new AtomicLong();
    private final AtomicLong reconnects = new AtomicLong();
    private final AtomicLong slabGrants = new AtomicLong();
    private final LocklessReads readers = new LocklessReads(this, new ReadsView());
    private final SlabReturns slabReturns;
    /** Reads made only by the coherence check mode; kept out of every other count. */
    private final AtomicLong verifyReads = new AtomicLong();

    // --- SYNC mirrors and failover (issue 9); mirrors is null without mirrors ---
    /** Null until the first mirror (at open or {@link #addMirror}); then never null again. */
    private volatile MirrorLinks mirrors;
    /** Where semantic records go: the backend's link, or the backend and every mirror. */
    private volatile RingWriter semWriter;
    /** The backend's first attach reply: image and geometry a mirror added later must match. */
    private final AttachReply backendAttach;
    private final Failover failover;
    private MirrorLinks.Flush inflightMirrors;
    /** The oldest checkpoint over the backend and every mirror: ring space is released up to it. */
    private volatile long releasedTxId;
    private long backendSemHead;
    private long backendRedoHead;
    /** The engine serving this frontend since a failover; this one then only redirects. */
    private volatile TransactionEngine successor;

    /** Thrown inside a superseded engine; {@link #execute} and the public calls continue on the successor. */
    static final class Superseded extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient TransactionEngine next;

        Superseded(TransactionEngine next) {
            super("engine superseded after a failover", null, false, false);
            this.next = next;
        }
    }

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
        if (mirrors != null && !mirrors.isEmpty()) {
            try {
                mirrors.open(r, link.endpoint());
            } catch (RuntimeException e) {
                link.close();
                throw e;
            }
            this.mirrors = mirrors;
            this.semWriter = mirrors.semanticWriter(link);
        } else {
            this.mirrors = null;
            this.semWriter = link;
        }
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
        this.slabReturns = new SlabReturns(new ReturnsView(), frontendId, pageSize, slabPages,
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
        this.agent = new Thread(this::agentLoop, "asymnvm-frontend-" + frontendId);
        agent.setDaemon(true);
        agent.start();
        if (!recovering) {
            declareMirrors(); // nothing of this incarnation is posted yet: every record will go to every mirror
        }
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
            recover();
        }
        return run(entry, args, null);
    }

    /**
     * The execute loop. {@code recovered} is null for a new call; during recovery it is the semantic record
     * being re-executed, which is adopted (kept at its position, same transaction id) instead of logged again.
     */
    private Object run(MethodRegistry.Entry entry, Object[] args, SemanticLogReader.Record recovered)
            throws Throwable {
        boolean ro = entry.spec().readOnly() && recovered == null;
        CallPages callPages = new CallPages();
        if (recovered == null) {
            Object result = readers.tryRun(entry, args, callPages); // a method read-only last time: no lock
            if (result != LocklessReads.LOCKED) {
                return result;
            }
        }
        byte[] argBytes = ro ? null : recovered != null ? recovered.arguments() : encodeArguments(entry, args);
        while (true) {
            // A logged call runs on arguments decoded afresh from the bytes it logs, in every attempt: an attempt
            // that changes its arguments and is abandoned cannot leak that change into the committed attempt, and
            // what commits is exactly what recovery will re-execute (which the first decode also proves).
            Object[] attemptArgs = argBytes == null ? args : decodeArguments(entry, argBytes, recovered);
            TransactionContext tx = new TransactionContext(this, callPages);
            Object result = null;
            Throwable failure = null;
            RetrySignal retry = null;
            long txId = -1;
            exec.lock();
            try {
                if (successor != null) {
                    throw new Superseded(successor); // nothing of this attempt is logged: it runs again there
                }
                callPages.validate(cache.fetchToken());
                readers.applyDeferred(cache);
                tx.bind();
                try {
                    result = entry.method().invoke(entry.target(), attemptArgs);
                } catch (InvocationTargetException e) {
                    failure = e.getCause();
                } finally {
                    tx.unbind();
                }
                retry = tx.signal() != null ? tx.signal()
                        : failure instanceof RetrySignal rs ? rs : null;
                if (retry == null && failure == null) {
                    if (tx.writes().isEmpty()) {
                        txId = 0;
                    } else if (ro && !tx.createdNamedRoot()) {
                        failure = new IllegalStateException("read-only transaction " + entry.signature()
                                + " wrote to persistent memory");
                    } else {
                        long id;
                        if (ro) {
                            // a read-only method that created a structure opened by name (its first use) commits
                            // the creation as an ordinary logged transaction, which recovery re-executes: drop this
                            // attempt and run again as one, on arguments decoded from the logged bytes
                            ro = false;
                            argBytes = encodeArguments(entry, args);
                            id = 0;
                        } else {
                            id = recovered == null ? logAndApply(entry, argBytes, tx) : adoptAndApply(recovered, tx);
                        }
                        if (id == 0) {
                            retry = RERUN_LOGGED;
                        } else if (id < 0) {
                            retry = new RetrySignal(RetrySignal.Reason.RING_FULL, -1);
                        } else {
                            txId = id;
                        }
                    }
                }
            } finally {
                exec.unlock();
            }
            if (retry == RERUN_LOGGED) {
                continue;
            }
            if (retry != null) {
                retries.incrementAndGet();
                handle(retry, callPages);
                continue;
            }
            if (failure != null) {
                aborts.incrementAndGet();
                throw failure;
            }
            if (txId == 0) {
                readOnly.incrementAndGet();
                if (recovered == null) {
                    readers.learn(entry, true);
                }
                awaitDurable(tx.newestDirtyRead());
                return result;
            }
            commits.incrementAndGet();
            if (recovered == null) {
                readers.learn(entry, false);
            }
            if (recovered == null && entry.spec().durability() == Durability.SYNC) {
                try {
                    awaitDurable(txId);
                } catch (Superseded s) {
                    // logged here: running it again on the successor would apply it twice (not expected to
                    // happen: a failover makes every posted record durable before it supersedes this engine)
                    throw new AsymNvmException(ErrorCode.CONNECTION_LOST, "tx " + txId + " of frontend "
                            + frontendId + " was logged but its durability is unknown after a failover", s);
                }
            } else if (txId > lastAsyncTxId) {
                lastAsyncTxId = txId;
            }
            return result;
        }
    }

    private static final RetrySignal RERUN_LOGGED = new RetrySignal(RetrySignal.Reason.RERUN_LOGGED, -1);

    private Object[] decodeArguments(MethodRegistry.Entry entry, byte[] argBytes,
                                     SemanticLogReader.Record recovered) {
        try {
            return codec.decode(argBytes);
        } catch (AsymNvmException e) {
            if (e.errorCode() != ErrorCode.CLASS_NOT_REGISTERED) {
                throw e;
            }
            // a record from the backend names a class this frontend does not allow: it was never loaded
            throw new AsymNvmException(ErrorCode.CLASS_NOT_REGISTERED, (recovered != null
                    ? "cannot recover frontend " + frontendId + ": semantic record of tx " + recovered.txId()
                    : "arguments of a call") + " for " + entry.signature() + " name a class that is not allowed: "
                    + e.detail(), e);
        } catch (RuntimeException | LinkageError e) { // Kryo reports some failures as errors (InstantiationError)
            if (recovered != null) {
                throw new AsymNvmException(ErrorCode.RECOVERY_REQUIRED, "cannot decode the arguments of tx "
                        + recovered.txId() + " for " + entry.signature() + ": " + e.getMessage(), e);
            }
            throw new IllegalArgumentException("arguments of " + entry.signature() + " do not survive their "
                    + "semantic-log encoding (they could not be re-executed in recovery): " + e.getMessage(), e);
        }
    }

    private byte[] encodeArguments(MethodRegistry.Entry entry, Object[] args) {
        byte[] argBytes;
        try {
            argBytes = codec.encode(args);
        } catch (AsymNvmException e) {
            throw new AsymNvmException(e.errorCode(), "call of " + entry.signature() + " refused before anything "
                    + "was logged: " + e.detail(), e);
        }
        if (argBytes.length > maxArgumentBytes) {
            throw new IllegalArgumentException("arguments of " + entry.signature() + " serialize to "
                    + argBytes.length + " bytes, limit " + maxArgumentBytes);
        }
        return argBytes;
    }

    /** Step 2 under the lock: id, semantic record, dirty pages, redo. Returns -1 if a ring has no room. */
    private long logAndApply(MethodRegistry.Entry entry, byte[] argBytes, TransactionContext tx) {
        int redoBytes = RedoBuffer.sizeOf(tx.writes());
        if (redoBytes > redo.maxTransactionBytes()) {
            throw new IllegalStateException("transaction " + entry.signature() + " writes " + redoBytes
                    + " bytes of redo, limit " + redo.maxTransactionBytes());
        }
        int semLength = LogRecordLayout.alignedLength(SemanticRecordLayout.HEADER_LENGTH + argBytes.length);
        if (!semRing.fits(semLength)) {
            return -1;
        }
        if (!redo.hasRoomFor(redoBytes) && !shipRedo()) {
            return -1;
        }
        long txId = nextTxId++;
        long semEnd = semRing.append(semWriter, semLength,
                pos -> SemanticRecordLayout.encode(pos, txId, entry.hash(), argBytes, argBytes.length), txId);
        cache.putDirty(tx.privatePages(), txId); // one change of the cache sequence: readers see all or re-run
        redo.append(txId, tx.writes(), semEnd);
        posted = new Mark(txId, semEnd);
        if (redo.txCount() >= options.redoBatchTransactions() || redo.bytes() >= redo.maxBatchBytes() / 2) {
            shipRedo();
        }
        return txId;
    }

    /**
     * Pages fetched for one call, kept across its retries. Valid only while no once-dirty page has been evicted
     * since they were fetched (the cache's fetch token is unchanged); otherwise dropped and fetched again.
     */
    static final class CallPages {
        private final Map<Long, byte[]> pages = new java.util.HashMap<>();
        private long token = -1;

        void keep(long pageIndex, byte[] page, long fetchToken) {
            if (fetchToken != token) {
                pages.clear();
                token = fetchToken;
            }
            pages.put(pageIndex, page);
        }

        void validate(long currentToken) {
            if (currentToken != token) {
                pages.clear();
            }
        }

        byte[] get(long pageIndex) {
            return pages.get(pageIndex);
        }
    }

    /** Recovery's step 2: the semantic record is already in the ring; keep it and apply the write set. */
    private long adoptAndApply(SemanticLogReader.Record record, TransactionContext tx) {
        int redoBytes = RedoBuffer.sizeOf(tx.writes());
        if (!redo.hasRoomFor(redoBytes) && !shipRedo()) {
            return -1;
        }
        long txId = record.txId();
        if (txId != nextTxId) {
            throw new AsymNvmException(ErrorCode.CORRUPT_RECORD, "semantic record at " + record.position()
                    + " holds tx " + txId + ", expected " + nextTxId);
        }
        nextTxId++;
        semRing.adopt(semWriter, record.position(), record.raw(), txId, record.position() + record.raw().length);
        long semEnd = semRing.position();
        cache.putDirty(tx.privatePages(), txId); // one change of the cache sequence: readers see all or re-run
        redo.append(txId, tx.writes(), semEnd);
        posted = new Mark(txId, semEnd);
        if (redo.txCount() >= options.redoBatchTransactions() || redo.bytes() >= redo.maxBatchBytes() / 2) {
            shipRedo();
        }
        return txId;
    }

    /**
     * Frontend recovery (DESIGN §4): re-executes, in order and with their original transaction ids, the
     * semantic records this frontend's previous incarnation left after the backend's last applied transaction,
     * through the registered methods. Stops at the first torn record. Idempotent: a crash during recovery leaves
     * the records in the ring and the next recovery starts from whatever the backend applied meanwhile. Runs
     * automatically before the first new transaction; call it directly to recover eagerly.
     */
    public synchronized RecoveryReport recover() {
        AttachReply r = pendingRecovery;
        if (r == null) {
            RecoveryReport last = lastRecovery;
            return last != null ? last : RecoveryReport.NOTHING;
        }
        long start = System.nanoTime();
        List<SemanticLogReader.Record> records = SemanticLogReader.read(
                (offset, length) -> link.read(RegionIds.semantic(frontendId), offset, length).await().bytes(),
                r.semCapacity(), r.semHead(), r.semValidTail());
        long first = 0;
        long last = 0;
        int replayed = 0;
        for (int i = 0; i < records.size(); i++) {
            SemanticLogReader.Record rec = records.get(i);
            if (rec.isPadding()) {
                long owner = i + 1 < records.size() ? records.get(i + 1).txId() : nextTxId;
                exec.lock();
                try {
                    long span = r.semCapacity() - Math.floorMod(rec.position(), r.semCapacity());
                    semRing.adopt(semWriter, rec.position(), rec.raw(), owner, rec.position() + span);
                } finally {
                    exec.unlock();
                }
                continue;
            }
            MethodRegistry.Entry entry = registry.lookup(rec.methodHash());
            if (entry == null) {
                throw new AsymNvmException(ErrorCode.RECOVERY_REQUIRED, "cannot recover frontend " + frontendId
                        + ": semantic record of tx " + rec.txId() + " names method hash 0x"
                        + Long.toHexString(rec.methodHash()) + ", which is not registered (registered: "
                        + registry.signatures() + "); register every @PersistentTransaction interface with "
                        + "transactional(...) before the first call, with unchanged signatures");
            }
            try {
                run(entry, null, rec); // arguments are decoded from the record, afresh for every attempt
            } catch (AsymNvmException e) {
                if (e.errorCode() == ErrorCode.RECOVERY_REQUIRED || e.errorCode() == ErrorCode.CLASS_NOT_REGISTERED) {
                    throw e;
                }
                throw new AsymNvmException(ErrorCode.RECOVERY_REQUIRED, "re-execution of tx " + rec.txId() + " ("
                        + entry.signature() + ") failed: " + e.getMessage(), e);
            } catch (Throwable t) {
                throw new AsymNvmException(ErrorCode.RECOVERY_REQUIRED, "re-execution of tx " + rec.txId() + " ("
                        + entry.signature() + ") failed; the method is not deterministic or its code changed: "
                        + t, t);
            }
            if (first == 0) {
                first = rec.txId();
            }
            last = rec.txId();
            replayed++;
        }
        awaitDurable(posted.txId(), controlRoundTrips);
        pendingRecovery = null;
        declareMirrors(); // the re-executed records are durable on every mirror now
        RecoveryReport report = new RecoveryReport(replayed, first, last,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        lastRecovery = report;
        LOG.info("frontend {} recovered: re-executed {} transactions ({}..{}) in {} ms", frontendId, replayed,
                first, last, report.millis());
        return report;
    }

    /** What {@link #recover()} did: how many transactions it re-executed, their ids, and how long it took. */
    public record RecoveryReport(int transactions, long firstTxId, long lastTxId, long millis) {
        /** Nothing was pending: no transaction re-executed. */
        public static final RecoveryReport NOTHING = new RecoveryReport(0, 0, 0, 0);
    }

    /** Posts the pending redo batch if the redo ring has room; under the lock. */
    private boolean shipRedo() {
        if (redo.isEmpty()) {
            return true;
        }
        int length = redo.alignedLength();
        if (!redoRing.fits(length)) {
            return false;
        }
        redoRing.append(link, length, redo::seal, redo.lastTxId());
        redoBatches.incrementAndGet();
        return true;
    }

    /** Lockless: a page preference met without the lock, applied by the next holder of {@code exec}. */
    void deferPreference(long pageIndex) {
        readers.defer(pageIndex);
    }

    private void handle(RetrySignal signal, CallPages callPages) {
        switch (signal.reason) {
            case PAGE_MISS -> {
                long token = cache.fetchToken();
                byte[] page = fetch(signal.pageIndex);
                if (page != null) {
                    callPages.keep(signal.pageIndex, page, token);
                }
            }
            case NEED_SLAB -> grantSlab();
            case RING_FULL -> awaitRingSpace();
            default -> throw new IllegalStateException("unknown retry reason " + signal.reason);
        }
    }

    /**
     * Fetches a page and installs it in the cache. Returns the image if the calling transaction must keep it
     * aside (it was installed, so the retrying call can keep it even if the cache evicts it at once and a
     * transaction whose pages exceed the cache still finishes; or it lies outside this frontend's slabs and is
     * never cached), null if the cache already had the page.
     */
    private byte[] fetch(long pageIndex) {
        while (true) {
            long generation = link.generation();
            long token;
            int pages;
            byte[][] cleanBefore = null;
            exec.lock();
            try {
                token = cache.fetchToken();
                readers.applyDeferred(cache);
                pages = readAheadWindow(pageIndex);
                if (options.verifyCache()) {
                    cleanBefore = new byte[pages][];
                    for (int i = 0; i < pages; i++) {
                        cleanBefore[i] = cache.cleanImage(pageIndex + i);
                    }
                }
            } finally {
                exec.unlock();
            }
            byte[] run;
            try {
                run = link.read(RegionIds.HEAP, pageIndex * pageSize, pages * pageSize).await(waitPolicy).bytes();
                fetchRoundTrips.incrementAndGet();
            } catch (AsymNvmException e) {
                recoverOrThrow(e, generation);
                continue;
            }
            byte[] page = java.util.Arrays.copyOf(run, pageSize);
            exec.lock();
            try {
                if (cleanBefore != null) {
                    for (int i = 0; i < pages; i++) {
                        compareClean(pageIndex + i, cleanBefore[i], run, i * pageSize, "on a fetch");
                    }
                }
                for (int i = 1; i < pages; i++) {
                    cache.insertFetched(pageIndex + i,
                            java.util.Arrays.copyOfRange(run, i * pageSize, (i + 1) * pageSize), token);
                }
                PageCache.Insert result = cache.insertFetched(pageIndex, page, token);
                if (result == PageCache.Insert.INSERTED || result == PageCache.Insert.NOT_OWNED) {
                    return page;
                }
                if (result == PageCache.Insert.ALREADY_CACHED) {
                    return null;
                }
            } finally {
                exec.unlock();
            }
        }
    }

    /**
     * How many pages a miss of {@code pageIndex} reads (under the lock). Read-ahead: the pages after a missed one
     * usually belong to the same structure (node pools are carved from contiguous blocks), and one round trip
     * carries them for little more than one page. It never crosses into memory this frontend does not own: the
     * first page of a slab not yet granted would be cached, and the grant would then initialise the slab under
     * that copy (issue 7). A miss outside owned memory reads that page alone.
     */
    private int readAheadWindow(long pageIndex) {
        long heapPages = heapSize / pageSize;
        int limit = (int) Math.max(1, Math.min(options.readAheadPages(), heapPages - pageIndex));
        if (!cache.owns(pageIndex)) {
            return 1;
        }
        int pages = 1;
        while (pages < limit && cache.owns(pageIndex + pages)) {
            pages++;
        }
        return pages;
    }

    /**
     * Coherence check (under the lock): if the clean image {@code before} is still the cached one, it must equal
     * the backend's bytes. Identity matters: a page written or re-fetched since is a new array and is skipped,
     * because the backend image read meanwhile may legitimately be older or newer than it.
     */
    private void compareClean(long pageIndex, byte[] before, byte[] backend, int at, String when) {
        if (before == null || cache.cleanImage(pageIndex) != before) {
            return;
        }
        int diff = java.util.Arrays.mismatch(before, 0, pageSize, backend, at, at + pageSize);
        if (diff >= 0) {
            CacheIncoherentException e = new CacheIncoherentException(frontendId, pageIndex, pageIndex * pageSize,
                    cache.lastWriter(pageIndex), appliedTxId, diff, before[diff], backend[at + diff], when);
            fatal = e;
            throw e;
        }
    }

    /**
     * Coherence check mode: compares each listed page that is still cached clean with the backend's image (reads
     * runs of adjacent pages together, outside the lock). Pages are listed at checkpoints (they just became
     * clean: the backend applied their last writer) and by {@link #sync()} (every clean page).
     */
    private void verifyClean(long[] pages, String when) {
        int i = 0;
        while (i < pages.length) {
            int n = 1;
            while (i + n < pages.length && n < 64 && pages[i + n] == pages[i] + n) {
                n++;
            }
            long first = pages[i];
            int count = n;
            i += n;
            long generation = link.generation();
            byte[][] before = new byte[count][];
            exec.lock();
            try {
                for (int k = 0; k < count; k++) {
                    before[k] = cache.cleanImage(first + k);
                }
            } finally {
                exec.unlock();
            }
            byte[] run;
            try {
                run = link.read(RegionIds.HEAP, first * pageSize, count * pageSize).await(waitPolicy).bytes();
                verifyReads.incrementAndGet();
            } catch (AsymNvmException e) {
                recoverOrThrow(e, generation);
                continue; // reconnected: every clean page was dropped, nothing of this run is left to compare
            }
            exec.lock();
            try {
                for (int k = 0; k < count; k++) {
                    compareClean(first + k, before[k], run, k * pageSize, when);
                }
            } finally {
                exec.unlock();
            }
        }
    }

    /**
     * Checks the pages that became clean at checkpoints since the last call (coherence check mode only). Under
     * {@code verifyLock}, so that a sweep at {@code sync()} waits for a checkpoint's check in flight and a
     * difference is reported by the check that owns it.
     */
    private void verifyCheckpointed() {
        if (!options.verifyCache()) {
            return;
        }
        synchronized (verifyLock) {
            long[] pages;
            exec.lock();
            try {
                if (toVerify.isEmpty()) {
                    return;
                }
                pages = toVerify.stream().mapToLong(Long::longValue).distinct().sorted().toArray();
                toVerify.clear();
            } finally {
                exec.unlock();
            }
            verifyClean(pages, "after checkpoint (applied tx " + appliedTxId + ")");
        }
    }

    /** What {@link LocklessReads} sees of this engine. */
    private final class ReadsView implements LocklessReads.Engine {
        @Override
        public PageCache cache() {
            return cache;
        }

        @Override
        public void checkServing() {
            checkUsable();
        }

        @Override
        public void handle(RetrySignal signal, CallPages callPages) {
            TransactionEngine.this.handle(signal, callPages);
        }

        @Override
        public void awaitDurable(long txId) {
            TransactionEngine.this.awaitDurable(txId);
        }

        @Override
        public void countRetry() {
            retries.incrementAndGet();
        }

        @Override
        public void countAbort() {
            aborts.incrementAndGet();
        }
    }

    /** What {@link SlabReturns} sees of this engine. */
    private final class ReturnsView implements SlabReturns.Engine {
        @Override
        public ReentrantLock exec() {
            return exec;
        }

        @Override
        public ReentrantLock slabLock() {
            return slabLock;
        }

        @Override
        public PageCache cache() {
            return cache;
        }

        @Override
        public BlockAllocator allocator() {
            return allocator;
        }

        @Override
        public BackendLink link() {
            return link;
        }

        @Override
        public long lastPostedTxId() {
            return posted.txId();
        }

        @Override
        public long appliedTxId() {
            return appliedTxId;
        }

        @Override
        public boolean idle() {
            return pendingRecovery == null && fatal == null && running;
        }

        @Override
        public void recoverOrThrow(AsymNvmException e, long failedGeneration) {
            TransactionEngine.this.recoverOrThrow(e, failedGeneration);
        }
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

    private void grantSlab() {
        slabLock.lock();
        try {
            grantSlabLocked();
        } finally {
            slabLock.unlock();
        }
    }

    private void grantSlabLocked() {
        exec.lock();
        try {
            if (slabReturns.reuseRetired() >= 0) {
                return; // a slab on its way back is taken into use again: no grant, no round trip
            }
        } finally {
            exec.unlock();
        }
        while (true) {
            long generation = link.generation();
            try {
                byte[] r = link.call(ControlMessageLayout.KIND_GRANT_SLAB, 0);
                controlRoundTrips.incrementAndGet();
                long slab = ByteBuffer.wrap(r).order(ByteOrder.LITTLE_ENDIAN).getLong();
                exec.lock();
                try {
                    // ownership changes: nothing cached of the slab survives, no fetch in flight installs a page
                    // of it read before the grant initialised its header (PageCache's coherence invariant)
                    cache.sequence().beginChange(); // one section: lockless readers see both or re-run
                    try {
                        cache.invalidateRange(slab * slabPages, slabPages);
                        allocator.addSlab(slab);
                    } finally {
                        cache.sequence().endChange();
                    }
                    slabGrants.incrementAndGet();
                } finally {
                    exec.unlock();
                }
                return;
            } catch (AsymNvmException e) {
                if (e.errorCode() == ErrorCode.QUOTA_EXCEEDED && reuseEmptied()) {
                    return; // at the quota, a slab this frontend just emptied is used again instead
                }
                recoverOrThrow(e, generation);
            }
        }
    }

    /** Probes the slabs that may have just emptied and takes one back into use; false if none is empty. */
    private boolean reuseEmptied() {
        slabReturns.probeCandidates();
        exec.lock();
        try {
            return slabReturns.reuseRetired() >= 0;
        } finally {
            exec.unlock();
        }
    }

    /** A control call outside any transaction (catalog), reconnecting like every other caller. */
    public byte[] controlCall(byte[] request) {
        try {
            return controlCallHere(request);
        } catch (Superseded s) {
            return s.next.controlCall(request);
        }
    }

    private byte[] controlCallHere(byte[] request) {
        checkUsable();
        while (true) {
            long generation = link.generation();
            try {
                byte[] reply = link.call(request);
                controlRoundTrips.incrementAndGet();
                return reply;
            } catch (AsymNvmException e) {
                recoverOrThrow(e, generation);
            }
        }
    }

    private void awaitRingSpace() {
        long start = System.nanoTime();
        long appliedBefore = releasedTxId;
        while (System.nanoTime() - start < SPACE_WAIT_NANOS) {
            exec.lock();
            try {
                shipRedo();
            } finally {
                exec.unlock();
            }
            if (posted.txId() > durableTxId) {
                awaitDurable(posted.txId(), controlRoundTrips);
            }
            pollApplied(false);
            if (releasedTxId > appliedBefore || posted.txId() == releasedTxId) {
                return;
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(options.pollIntervalMicros()));
        }
        throw new AsymNvmException(ErrorCode.NO_SPACE, "log rings of frontend " + frontendId
                + " full and the backend applied nothing for " + TimeUnit.NANOSECONDS.toMillis(SPACE_WAIT_NANOS)
                + " ms (applied tx " + appliedTxId + ", released tx " + releasedTxId + (mirrors == null ? ""
                : " over the backend and SYNC mirrors " + mirrors.endpoints()) + ", last tx " + posted.txId() + ")");
    }

    /** Waits until transaction {@code txId} is durable: the commit point (DESIGN §2 step 3). */
    void awaitDurable(long txId) {
        awaitDurable(txId, commitRoundTrips);
    }

    /**
     * Group commit. A committer whose record the FLUSH in flight covers waits for that FLUSH. With
     * {@code FrontendOptions.combineFlushes}, one whose record came after it lets that FLUSH land first, as a gate
     * (not awaited as its own round trip, so each commit still waits for at most one), and then, back in the loop,
     * the first of those waiters posts one FLUSH covering every record posted meanwhile, which the others share:
     * with N committers about one FLUSH per round-trip time instead of one per commit. Without it (the default) it
     * posts its own FLUSH at once (pipelined FLUSHes, each a backend persist), which measured faster on the 2-core
     * machine. A lone committer never finds a FLUSH in flight that does not cover it: same path either way.
     */
    private void awaitDurable(long txId, AtomicLong roundTrips) {
        while (durableTxId < txId) {
            checkUsable();
            Completion c;
            long covers;
            long generation;
            MirrorLinks.Flush mirrorFlush = null;
            Completion gate = null;
            synchronized (flushLock) {
                if (durableTxId >= txId) {
                    return;
                }
                boolean current = inflight != null && inflightGeneration == link.generation();
                if (current && inflightCovers < txId && combineFlushes && !inflight.isDone()) {
                    gate = inflight; // not covered but in flight: let it land, then share or post the next one
                    c = null;
                    covers = 0;
                    generation = 0;
                } else if (current && inflightCovers >= txId) {
                    c = inflight;
                    covers = inflightCovers;
                    generation = inflightGeneration;
                    mirrorFlush = inflightMirrors;
                } else {
                    Mark m = posted;
                    generation = link.generation();
                    c = link.flush(m.semEnd());
                    if (mirrors != null) {
                        mirrorFlush = mirrors.flush(m.semEnd()); // in parallel: still one round-trip time
                        inflightMirrors = mirrorFlush;
                    }
                    inflight = c;
                    inflightCovers = m.txId();
                    inflightGeneration = generation;
                    covers = m.txId();
                }
            }
            if (gate != null) {
                gate.awaitSettled(waitPolicy); // a gate, not a round trip of ours: its owner handles its result
                continue;
            }
            try {
                c.await(waitPolicy);
            } catch (AsymNvmException e) {
                try {
                    recoverOrThrow(e, generation);
                } catch (Superseded s) {
                    if (durableTxId >= txId) {
                        return; // a failover made every posted record durable on the promoted mirror
                    }
                    throw s;
                }
                continue;
            }
            if (mirrorFlush != null) {
                boolean all;
                try {
                    all = awaitMirrors(mirrorFlush); // a mirror's failure is the mirror's, never the backend's
                } catch (Superseded s) {
                    if (durableTxId >= txId) {
                        return;
                    }
                    throw s;
                }
                if (!all) {
                    continue; // a mirror was reconnected and its ring re-posted: FLUSH again
                }
            }
            roundTrips.incrementAndGet();
            advanceDurable(covers);
        }
    }

    /**
     * Raises the durable watermark. Its own leaf lock: callers may hold {@code exec} (learnApplied), and
     * {@link #recover()} holds this engine's monitor while it takes {@code exec}, so the monitor would deadlock.
     */
    private void advanceDurable(long covers) {
        synchronized (durableLock) {
            if (covers > durableTxId) {
                durableTxId = covers;
            }
        }
    }

    private void recoverOrThrow(AsymNvmException e, long failedGeneration) {
        if (successor != null) {
            throw new Superseded(successor);
        }
        if (e.errorCode() == ErrorCode.STALE_EPOCH || e.errorCode() == ErrorCode.IDENTITY_MISMATCH) {
            fatal = e; // a newer incarnation attached: never write, flush or reconnect again
            throw e;
        }
        if (e.errorCode() == ErrorCode.RING_CORRUPT) {
            // quarantined: the backend acknowledges nothing more from this incarnation, so every later FLUSH
            // would be refused the same way; stop (the agent too) instead of retrying, and keep the ring's words
            LOG.error("frontend {} stopped: {}", frontendId, e.getMessage());
            fatal = e;
            throw e;
        }
        if (e.errorCode() != ErrorCode.CONNECTION_LOST && e.errorCode() != ErrorCode.TIMEOUT) {
            throw e;
        }
        recover(failedGeneration);
    }

    /**
     * Reconnects after a lost connection (backend restarted or network failure) and writes every record the
     * backend has not applied again at its position, before any new record or FLUSH can be posted.
     */
    private void recover(long failedGeneration) {
        long start = System.nanoTime();
        synchronized (flushLock) {
            exec.lock();
            try {
                if (successor != null) {
                    throw new Superseded(successor);
                }
                AsymNvmException f = fatal;
                if (f != null) {
                    throw f; // fenced or abandoned: re-attaching would fence the incarnation that replaced us
                }
                AttachReply r;
                try {
                    r = link.reconnect(failedGeneration);
                } catch (AsymNvmException e) {
                    if (mirrors != null && e.errorCode() == ErrorCode.CONNECTION_LOST && running) {
                        failOver(e, start); // returns once a promoted mirror serves this frontend
                        return;
                    }
                    fatal = e;
                    throw e;
                }
                if (r == null) {
                    return;
                }
                reconnects.incrementAndGet();
                inflight = null;
                cache.invalidateClean(); // the backend restarted or the session changed: refetch what is clean
                learnApplied(r.appliedTxId(), r.semHead(), r.redoHead());
                int sem = semRing.repost(link);
                int red = redoRing.repost(link);
                LOG.info("frontend {} re-posted {} semantic and {} redo records after reconnect", frontendId, sem,
                        red);
            } finally {
                exec.unlock();
            }
            declareMirrors(); // a new backend attach epoch: the mirrors count this frontend under it again
        }
    }

    /** Under the exec lock: the backend applied up to {@code applied}; release ring space and unpin pages. */
    private void learnApplied(long applied, long semHead, long redoHead) {
        if (applied < appliedTxId) {
            return;
        }
        appliedTxId = applied;
        if (mirrors == null) {
            releasedTxId = applied;
            semRing.release(applied, semHead);
            redoRing.release(applied, redoHead);
            if (applied > durableTxId) {
                advanceDurable(applied);
            }
        } else {
            backendSemHead = Math.max(backendSemHead, semHead);
            backendRedoHead = Math.max(backendRedoHead, redoHead);
            releaseAtMin();
        }
        cache.unpin(applied, options.verifyCache() ? toVerify::add : null);
    }

    /**
     * Under the exec lock, with mirrors: releases ring space at the oldest checkpoint over the backend and every
     * in-sync mirror (what a mirror has not applied stays retained and unoverwritten: a promoted mirror
     * re-executes it), and takes what all of them applied as durable.
     */
    private void releaseAtMin() {
        long min = mirrors.minApplied(appliedTxId);
        if (min > releasedTxId) {
            releasedTxId = min;
        }
        semRing.release(releasedTxId, mirrors.minSemHead(backendSemHead));
        redoRing.release(releasedTxId, mirrors.minRedoHead(backendRedoHead));
        if (releasedTxId > durableTxId) {
            advanceDurable(releasedTxId);
        }
    }

    /** Reads the control block (one round trip) and learns the backend's checkpoint. */
    private void pollApplied(boolean background) {
        long generation = link.generation();
        byte[] block;
        try {
            block = link.read(RegionIds.control(frontendId), 0, ControlBlockLayout.READ_LENGTH).await().bytes();
        } catch (AsymNvmException e) {
            recoverOrThrow(e, generation);
            return;
        }
        (background ? backgroundRoundTrips : controlRoundTrips).incrementAndGet();
        // only a durable checkpoint releases ring space: a newer slot may be visible before it is persisted
        ControlBlockLayout.Checkpoint cp = ControlBlockLayout.publishedCheckpoint(block);
        if (cp.appliedTxId() > appliedTxId) {
            exec.lock();
            try {
                learnApplied(cp.appliedTxId(), cp.semHead(), cp.redoHead());
            } finally {
                exec.unlock();
            }
        }
        if (mirrors != null) {
            pollMirrors(background);
        }
        verifyCheckpointed();
    }

    private void agentLoop() {
        long pollNanos = TimeUnit.MICROSECONDS.toNanos(options.pollIntervalMicros());
        long redoDelayNanos = TimeUnit.MICROSECONDS.toNanos(options.redoMaxDelayMicros());
        long asyncNanos = TimeUnit.MICROSECONDS.toNanos(options.asyncFlushMicros());
        long lastPoll = 0;
        long keepAliveNanos = TimeUnit.MILLISECONDS.toNanos(options.keepAliveMillis());
        long lastKeepAlive = System.nanoTime();
        long lastAsyncFlush = System.nanoTime();
        while (running) {
            try {
                long now = System.nanoTime();
                if (exec.tryLock()) {
                    try {
                        if (!redo.isEmpty() && now - redo.oldestNanos() >= redoDelayNanos) {
                            shipRedo();
                        }
                    } finally {
                        exec.unlock();
                    }
                }
                if (lastAsyncTxId > durableTxId && now - lastAsyncFlush >= asyncNanos) {
                    lastAsyncFlush = now;
                    awaitDurable(lastAsyncTxId, backgroundRoundTrips);
                }
                if (posted.txId() > releasedTxId && now - lastPoll >= pollNanos) {
                    lastPoll = now;
                    pollApplied(true);
                }
                slabReturns.doWork();
                if (keepAliveNanos > 0 && now - lastKeepAlive >= keepAliveNanos) {
                    lastKeepAlive = now;
                    keepAlive();
                }
                LockSupport.parkNanos(Math.min(pollNanos, redoDelayNanos) / 2);
            } catch (CacheIncoherentException e) {
                LOG.error("frontend {} stopped: {}", frontendId, e.getMessage());
                return;
            } catch (Superseded s) {
                return; // a failover: the successor's agent serves this frontend
            } catch (AsymNvmException e) {
                if (fatal != null || !running) {
                    return; // abandoned, fenced or closing: nothing to report
                }
                LOG.error("frontend {} background agent: {}", frontendId, e.getMessage());
            } catch (RuntimeException e) {
                LOG.error("frontend {} background agent failed", frontendId, e);
            }
        }
    }

    /**
     * Traffic for the backend's idle timeout: one READ posted and not awaited. A failure is left to the next real
     * operation, which reconnects; an idle frontend never becomes unusable because of a keep-alive.
     */
    private void keepAlive() {
        try {
            link.read(RegionIds.control(frontendId), 0, ControlBlockLayout.READ_LENGTH);
        } catch (RuntimeException notConnected) {
            // reconnecting or closed: nothing to keep alive
        }
        if (mirrors != null) {
            for (MirrorLinks.Mirror m : mirrors.active()) {
                try {
                    m.link().read(RegionIds.control(frontendId), 0, ControlBlockLayout.READ_LENGTH);
                } catch (RuntimeException notConnected) {
                    // the next commit reconnects it
                }
            }
        }
    }

    private void checkUsable() {
        TransactionEngine next = successor;
        if (next != null) {
            throw new Superseded(next);
        }
        AsymNvmException f = fatal;
        if (f instanceof CacheIncoherentException ci) {
            throw ci;
        }
        if (f != null) {
            throw new AsymNvmException(f.errorCode(), "frontend " + frontendId + " lost its backend: "
                    + f.getMessage(), f);
        }
        if (!running) {
            throw new IllegalStateException("frontend " + frontendId + " is closed");
        }
    }

    /** Makes everything durable and applied at the backend. */
    public void sync() {
        try {
            syncHere();
        } catch (Superseded s) {
            s.next.sync();
        }
    }

    private void syncHere() {
        long deadline = System.nanoTime() + SPACE_WAIT_NANOS;
        while (true) {
            checkUsable();
            exec.lock();
            boolean shipped;
            try {
                shipped = shipRedo();
            } finally {
                exec.unlock();
            }
            long last = posted.txId();
            awaitDurable(last, controlRoundTrips);
            pollApplied(false);
            if (shipped && appliedTxId >= last) {
                if (options.verifyCache()) {
                    verifyCheckpointed(); // what the checkpoints unpinned first, reported as such
                    synchronized (verifyLock) {
                        checkUsable(); // a check that was in flight may have found a difference meanwhile
                        long[] clean;
                        exec.lock();
                        try {
                            clean = cache.cleanPages();
                        } finally {
                            exec.unlock();
                        }
                        verifyClean(clean, "by a sweep of every clean page at sync");
                    }
                }
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AsymNvmException(ErrorCode.TIMEOUT, "backend did not apply transactions up to " + last
                        + " (applied " + appliedTxId + ")");
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(options.pollIntervalMicros()));
        }
    }

    public EngineStats stats() {
        return new EngineStats(commits.get(), readOnly.get() + readers.completed(), aborts.get(), retries.get(), commitRoundTrips.get(),
                fetchRoundTrips.get(), controlRoundTrips.get(), backgroundRoundTrips.get(), redoBatches.get(),
                reconnects.get(), posted.txId(), durableTxId, appliedTxId, slabGrants.get(),
                verifyReads.get(), slabReturns.returned(), failover.failovers(), failover.detectMillis(),
                failover.resumeMillis(), readers.attempts(), readers.conflicts(), readers.fallbacks(),
                readers.abandoned());
    }

    public io.asymnvm.core.fabric.FabricCounters.Snapshot counters() {
        return link.counters();
    }

    /** Clean detach: ship and apply everything, stop the agent, tell the backend, close the connection. */
    @Override
    public void close() {
        if (!running) {
            return;
        }
        try {
            if (fatal == null) {
                sync();
            }
        } finally {
            running = false;
            LockSupport.unpark(agent);
            try {
                agent.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            try {
                if (fatal == null) {
                    link.call(ControlMessageLayout.KIND_DETACH, 0);
                }
            } finally {
                link.close();
                if (mirrors != null) {
                    mirrors.close();
                }
            }
        }
    }

    /** Stops without flushing or detaching, as a crash would (tests and drills). */
    public void abandon() {
        running = false;
        fatal = new AsymNvmException(ErrorCode.CONNECTION_LOST, "frontend abandoned");
        LockSupport.unpark(agent);
        link.close();
        if (mirrors != null) {
            mirrors.close();
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // SYNC mirrors and failover (issue 9)
    // ---------------------------------------------------------------------------------------------------------

    /**
     * Waits for the mirrors' FLUSHes of one durability wait. Returns false if a mirror had to be reconnected
     * (its ring was re-posted; the caller FLUSHes again); a dropped mirror is not waited for.
     */
    private boolean awaitMirrors(MirrorLinks.Flush flush) {
        MirrorLinks.Mirror[] ms = flush.mirrors();
        for (int i = 0; i < ms.length; i++) {
            if (ms[i].dropped()) {
                continue;
            }
            try {
                Completion c = flush.completions()[i];
                if (c == null) {
                    throw new AsymNvmException(ErrorCode.CONNECTION_LOST, "not connected");
                }
                c.await(waitPolicy);
            } catch (AsymNvmException e) {
                if (ms[i].dropped()) {
                    continue;
                }
                recoverMirrorOrThrow(ms[i], e, flush.generations()[i]);
                return false;
            }
        }
        return true;
    }

    /** Reads every in-sync mirror's published checkpoint and releases ring space at the minimum. */
    private void pollMirrors(boolean background) {
        for (MirrorLinks.Mirror m : mirrors.active()) {
            long generation = m.link().generation();
            ControlBlockLayout.Checkpoint cp;
            try {
                cp = m.readCheckpoint();
            } catch (AsymNvmException e) {
                if (!background && !m.dropped()) {
                    recoverMirrorOrThrow(m, e, generation); // the agent leaves reconnecting to the commits
                }
                continue;
            }
            (background ? backgroundRoundTrips : controlRoundTrips).incrementAndGet();
            exec.lock();
            try {
                m.learn(cp.appliedTxId(), cp.semHead(), cp.redoHead());
                releaseAtMin();
            } finally {
                exec.unlock();
            }
        }
    }

    /**
     * A SYNC mirror's operation failed: reconnect it (commits wait, holding the locks, like for the backend) and
     * re-post every retained semantic record to the new session. Unreachable past the mirror reconnect timeout:
     * {@code CONNECTION_LOST} naming it, to the committing caller (not fatal: the next commit tries again, and a
     * dropped mirror is no longer waited for). A mirror that answers as a newly promoted backend is failed over to.
     */
    private void recoverMirrorOrThrow(MirrorLinks.Mirror m, AsymNvmException e, long failedGeneration) {
        if (e.errorCode() != ErrorCode.CONNECTION_LOST && e.errorCode() != ErrorCode.TIMEOUT) {
            throw new AsymNvmException(e.errorCode(), "SYNC mirror " + m.endpoint() + " of frontend " + frontendId
                    + ": " + e.detail(), e);
        }
        long start = System.nanoTime();
        long repostedFrom;
        // flushLock only while reconnecting: transactions keep executing and posting (their records are retained
        // and re-posted below), but no FLUSH can stamp the new session before the re-post
        synchronized (flushLock) {
            checkUsable();
            if (m.dropped()) {
                return;
            }
            AttachReply r;
            try {
                r = m.link().reconnect(failedGeneration);
            } catch (AsymNvmException x) {
                if (m.dropped()) {
                    return;
                }
                throw new AsymNvmException(x.errorCode(), "SYNC mirror " + m.endpoint() + " of frontend "
                        + frontendId + ": " + x.detail() + "; commits are not acknowledged without it until it "
                        + "is back or dropped (AsymNvm.dropMirror)", x);
            }
            if (r == null) {
                return;
            }
            exec.lock();
            try {
                if (mirrors.promoted(r, failover.fence())) {
                    promoteTo(m, r, start, System.nanoTime()); // the mirror serves now: the backend was replaced
                    return;
                }
                inflight = null;
                inflightMirrors = null;
                m.learn(r.appliedTxId(), r.semHead(), r.redoHead());
                repostedFrom = semRing.firstRetained();
                int n = semRing.repost(m.link());
                releaseAtMin();
                LOG.info("frontend {} reconnected SYNC mirror {} and re-posted {} semantic records", frontendId,
                        m.endpoint(), n);
            } finally {
                exec.unlock();
            }
            MirrorAdd.flushAndDeclare(m, repostedFrom, posted.semEnd(), link.attachEpoch(), releasedTxId);
        }
    }

    /**
     * Under {@code flushLock} and {@code exec}: the backend stayed unreachable. Re-attaches the mirrors until one
     * answers as the serving backend with a newer epoch (see {@link Failover}), then resumes on it; throws
     * {@code CONNECTION_LOST} (fatal) if none is promoted within the failover timeout.
     */
    private void failOver(AsymNvmException cause, long start) {
        long detected = System.nanoTime();
        long deadline = detected + TimeUnit.MILLISECONDS.toNanos(options.failoverTimeoutMillis());
        long backoff = TimeUnit.MILLISECONDS.toNanos(20);
        LOG.warn("frontend {}: {}; looking for a promoted mirror among {}", frontendId, cause.getMessage(),
                mirrors.endpoints());
        while (true) {
            for (MirrorLinks.Mirror m : mirrors.active()) {
                AttachReply r;
                try {
                    r = m.link().reconnect(m.link().generation()); // a fresh attach tells its role and epoch
                } catch (AsymNvmException e) {
                    LOG.info("frontend {}: mirror {} not available for failover: {}", frontendId, m.endpoint(),
                            e.getMessage());
                    continue;
                }
                if (r == null) {
                    continue;
                }
                if (mirrors.promoted(r, failover.fence())) {
                    promoteTo(m, r, start, detected);
                    return;
                }
                m.learn(r.appliedTxId(), r.semHead(), r.redoHead());
                semRing.repost(m.link()); // a new session on a mirror that stays one: it holds our records again
            }
            if (System.nanoTime() - deadline > 0) {
                AsymNvmException e = new AsymNvmException(ErrorCode.CONNECTION_LOST, cause.detail()
                        + ", and no SYNC mirror of " + mirrors.endpoints() + " answered as a backend newer than "
                        + "epoch " + failover.fence().highest() + " within " + options.failoverTimeoutMillis()
                        + " ms", cause);
                fatal = e;
                throw e;
            }
            LockSupport.parkNanos(backoff);
            backoff = Math.min(backoff * 2, TimeUnit.MILLISECONDS.toNanos(200));
        }
    }

    /**
     * Under {@code flushLock} and {@code exec}: resumes this frontend on the promoted mirror {@code m}. Every
     * retained semantic record is written again at its position there and FLUSHed (so every record this frontend
     * posted is durable on the new backend, and blocked commits return); then a new engine attaches afresh, as a
     * restarted frontend would, and re-executes what the new backend has not applied. This engine's cache, redo
     * buffer and retained redo are dropped with it (the new backend has only the redo the old one shipped).
     */
    private void promoteTo(MirrorLinks.Mirror m, AttachReply promoted, long start, long detected) {
        LOG.warn("frontend {}: mirror {} was promoted (epoch {}, applied tx {}); resuming on it", frontendId,
                m.endpoint(), promoted.backendEpoch(), promoted.appliedTxId());
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(options.failoverTimeoutMillis(),
                1_000));
        semRing.repost(m.link());
        m.link().flush(posted.semEnd()).await();
        advanceDurable(posted.txId());
        m.link().close();
        MirrorLinks rest = mirrors.without(m);
        TransactionEngine next = null;
        AsymNvmException last = null;
        while (next == null) {
            try {
                next = new TransactionEngine(m.link().asBackend(options.reconnectTimeoutMillis()),
                        rest.isEmpty() ? null : rest, options, registry, failover);
            } catch (AsymNvmException e) {
                boolean transientFailure = e.errorCode() == ErrorCode.CONNECTION_LOST
                        || e.errorCode() == ErrorCode.TIMEOUT || e.errorCode() == ErrorCode.LIMIT_EXCEEDED;
                if (!transientFailure || System.nanoTime() - deadline > 0) {
                    fatal = e;
                    throw e;
                }
                last = e;
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            }
        }
        if (last != null) {
            LOG.info("frontend {}: attach to the promoted mirror retried after {}", frontendId, last.getMessage());
        }
        successor = next;
        running = false;
        LockSupport.unpark(agent);
        link.close();
        try {
            next.recover(); // eagerly: the re-execution of what the new backend has not applied is part of resuming
        } catch (RuntimeException e) {
            LOG.error("frontend {}: recovery on the promoted mirror failed, retried at the next call: {}",
                    frontendId, e.getMessage());
        }
        long now = System.nanoTime();
        failover.record(detected - start, now - detected);
        LOG.warn("frontend {} failed over to {} (epoch {}): detection {} ms, resume {} ms", frontendId,
                m.endpoint(), promoted.backendEpoch(), TimeUnit.NANOSECONDS.toMillis(detected - start),
                TimeUnit.NANOSECONDS.toMillis(now - detected));
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
        MirrorLinks.Mirror m = e.mirrors.drop(endpoint);
        e.exec.lock();
        try {
            e.releaseAtMin();
        } finally {
            e.exec.unlock();
        }
        m.link().close();
        LOG.warn("frontend {} dropped SYNC mirror {}; in sync now: {}", frontendId, endpoint, e.mirrors.endpoints());
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

    /** {@link MirrorAdd}'s view of this engine's locks, rings and mirror set. */
    final class MirrorAddView {
        /** Where the records {@link #addAndRepost} re-posted start in the ring. */
        private long repostStart;

        private MirrorAddView() {
        }

        long repostStart() {
            return repostStart;
        }

        Object flushLock() {
            return flushLock;
        }

        ReentrantLock exec() {
            return exec;
        }

        void checkUsable() {
            TransactionEngine.this.checkUsable();
        }

        /** Under both locks: adds {@code m} to the mirror set (creating it) and re-posts the retained records. */
        MirrorLinks.Mirror addAndRepost(BackendLink l, AttachReply reply) {
            MirrorLinks ms = mirrors;
            if (ms == null) {
                ms = new MirrorLinks(List.of(), false);
            }
            MirrorLinks.Mirror m = ms.add(l, reply, backendAttach, link.endpoint());
            if (mirrors == null) {
                mirrors = ms;
                semWriter = ms.semanticWriter(link);
            }
            repostStart = semRing.firstRetained();
            int n = semRing.repost(l);
            inflight = null; // FLUSHes posted before the add do not cover the mirror
            inflightMirrors = null;
            LOG.info("frontend {} added SYNC mirror {} and re-posted {} semantic records", frontendId, l.endpoint(),
                    n);
            return m;
        }

        long semEnd() {
            return posted.semEnd();
        }

        long releasedTxId() {
            return releasedTxId;
        }

        long backendAttachEpoch() {
            return link.attachEpoch();
        }

        int frontendId() {
            return frontendId;
        }

        String backendEndpoint() {
            return link.endpoint();
        }

        void releaseAtMin() {
            TransactionEngine.this.releaseAtMin();
        }
    }

    MirrorAddView mirrorAddView() {
        return new MirrorAddView();
    }

    /** Declares every mirror SYNC under the backend attach epoch (MIRROR_POSTING); see {@link MirrorAdd}. */
    private void declareMirrors() {
        MirrorLinks ms = mirrors;
        if (ms != null) {
            for (MirrorLinks.Mirror m : ms.active()) {
                MirrorLinks.declare(m, link.attachEpoch(), releasedTxId);
            }
        }
    }

    /** The endpoints of the SYNC mirrors in sync now (empty without mirrors). */
    public List<String> mirrorEndpoints() {
        TransactionEngine e = current();
        return e.mirrors == null ? List.of() : e.mirrors.endpoints();
    }
}
