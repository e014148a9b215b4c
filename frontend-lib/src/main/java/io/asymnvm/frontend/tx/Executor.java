package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.frontend.Durability;
import io.asymnvm.frontend.cache.PageCache;
import io.asymnvm.recovery.semantic.SemanticLogReader;

import java.lang.reflect.InvocationTargetException;

/**
 * The executor (DESIGN §2 step 1): runs a method body against a {@link TransactionContext}, attempt after attempt,
 * until it commits, aborts or returns read-only. A method that ran read-only last time is offered to
 * {@link LocklessReads} first; otherwise every attempt runs under the execution lock {@code exec}, on arguments
 * decoded afresh from the bytes that will be logged. What needs the network (a page miss, a slab, ring space) is
 * never done under the lock: the attempt is abandoned with a {@link RetrySignal}, the work is done by
 * {@link #handle}, and the method runs again (so annotated methods must be deterministic). A finished attempt with
 * writes is handed to the {@link CommitPipeline}, a read-only one waits only for the durability of what it read.
 *
 * <p>It is also what {@link LocklessReads} sees of the engine.
 *
 * <p>Threads: any caller thread; one instance per engine, no state of its own.
 */
final class Executor implements LocklessReads.Engine {

    private final TransactionEngine engine;

    Executor(TransactionEngine engine) {
        this.engine = engine;
    }

    /**
     * The execute loop. {@code recovered} is null for a new call; during recovery it is the semantic record
     * being re-executed, which is adopted (kept at its position, same transaction id) instead of logged again.
     */
    Object run(MethodRegistry.Entry entry, Object[] args, SemanticLogReader.Record recovered)
            throws Throwable {
        CallPages callPages = new CallPages();
        boolean superseded = false;
        NaiveAccess naive = engine.naive;
        if (naive != null) {
            naive.lock().lock(); // the naive baseline: one call at a time, from its first read to its writes applied
        }
        try {
            return run(entry, args, recovered, callPages);
        } catch (Superseded s) {
            superseded = true; // the call runs again on the successor, which counts it
            throw s;
        } finally {
            if (!superseded) {
                engine.runCounts.record(callPages.runs());
            }
            if (naive != null) {
                naive.lock().unlock();
            }
        }
    }

    private Object run(MethodRegistry.Entry entry, Object[] args, SemanticLogReader.Record recovered,
                       CallPages callPages) throws Throwable {
        boolean ro = entry.readOnly() && recovered == null;
        if (recovered == null && engine.naive == null) {
            Object result = engine.readers.tryRun(entry, args, callPages); // a method read-only last time: no lock
            if (result != LocklessReads.LOCKED) {
                return result;
            }
        }
        // the semantic record the call logs (its header filled when it is posted), arguments in it
        byte[] record = ro ? null : recovered != null ? recovered.raw() : encodeArguments(entry, args);
        if (!ro && recovered == null && engine.writers.eligible(entry)) {
            Object result = engine.writers.tryRun(entry, record, callPages); // optimistic: body without the lock
            if (result != LocklessReads.LOCKED) {
                return result;
            }
        }
        while (true) {
            // A logged call runs on arguments decoded afresh from the bytes it logs, in every attempt: an attempt
            // that changes its arguments and is abandoned cannot leak that change into the committed attempt, and
            // what commits is exactly what recovery will re-execute (which the first decode also proves).
            Object[] attemptArgs = record == null ? args : decodeArguments(entry, record, recovered);
            TransactionContext tx = new TransactionContext(engine, callPages);
            callPages.beginRun(tx);
            Object result = null;
            Throwable failure = null;
            RetrySignal retry = null;
            long txId = -1;
            engine.exec.lock();
            try {
                if (engine.successor != null) {
                    throw new Superseded(engine.successor); // nothing of this attempt is logged: it runs again there
                }
                callPages.validate(engine.cache);
                engine.readers.applyDeferred(engine.cache);
                BodyRun run = runBody(entry, attemptArgs, tx, callPages);
                result = run.result();
                failure = run.failure();
                retry = run.retry();
                if (retry == null && failure == null) {
                    if (!tx.hasWrites()) {
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
                            record = encodeArguments(entry, args);
                            id = 0;
                        } else {
                            id = recovered == null ? engine.commit.logAndApply(entry, record, tx)
                                    : engine.commit.adoptAndApply(recovered, tx);
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
                engine.exec.unlock();
            }
            if (retry == RERUN_LOGGED) {
                continue;
            }
            if (retry != null) {
                engine.retries.incrementAndGet();
                handle(retry, callPages);
                continue;
            }
            if (failure != null) {
                engine.aborts.incrementAndGet();
                throw failure;
            }
            if (txId == 0) {
                engine.readOnly.incrementAndGet();
                if (recovered == null) {
                    engine.readers.learn(entry, true);
                }
                engine.commit.awaitDurable(tx.newestDirtyRead());
                return result;
            }
            return finishCommit(entry, recovered, txId, tx, result);
        }
    }

    /** After a commit (locked or optimistic): counts it, and waits for its durability if the call is SYNC. */
    Object finishCommit(MethodRegistry.Entry entry, SemanticLogReader.Record recovered, long txId,
                        TransactionContext tx, Object result) {
        engine.commits.incrementAndGet();
        if (recovered == null) {
            engine.readers.learn(entry, false);
        }
        if (engine.naive != null) {
            engine.commit.awaitDurable(txId); // the commit point, then the writes reach the heap before return
            engine.naive.writeThrough(txId, tx.writes().size());
            return result;
        }
        if (recovered == null && entry.durability() == Durability.SYNC) {
            try {
                engine.commit.awaitDurable(txId);
            } catch (Superseded s) {
                // logged here: running it again on the successor would apply it twice (not expected to
                // happen: a failover makes every posted record durable before it supersedes this engine)
                throw new AsymNvmException(ErrorCode.CONNECTION_LOST, "tx " + txId + " of frontend "
                        + engine.frontendId + " was logged but its durability is unknown after a failover", s);
            }
        } else if (txId > engine.lastAsyncTxId) {
            engine.lastAsyncTxId = txId;
        }
        return result;
    }

    /** What one run of a method body left: its result or its failure, and the retry it asks for (null: none). */
    record BodyRun(Object result, Throwable failure, RetrySignal retry) {
    }

    /**
     * Runs the method body once on {@code tx}, bound to the calling thread meanwhile (every kind of attempt: under
     * the lock, lockless, optimistic). A signal the body swallowed still counts. A doomed collecting attempt ran on
     * made-up bytes: its outcome is void, its misses are not (its retry is their fetch).
     */
    static BodyRun runBody(MethodRegistry.Entry entry, Object[] args, TransactionContext tx,
                           CallPages callPages) throws IllegalAccessException {
        Object result = null;
        Throwable failure = null;
        tx.bind();
        try {
            result = entry.method().invoke(entry.target(), args);
        } catch (InvocationTargetException e) {
            failure = e.getCause();
        } finally {
            tx.unbind();
        }
        RetrySignal retry = tx.signal() != null ? tx.signal() : failure instanceof RetrySignal rs ? rs : null;
        if (tx.doomed()) {
            retry = tx.missSignal();
            failure = null;
            result = null;
            callPages.countDoomed();
        }
        return new BodyRun(result, failure, retry);
    }

    /**
     * How many doomed collecting attempts a call may make ({@link MissCollector}); later attempts stop at their
     * first miss. Two: the first collects the pages the call needs, the second those that pointers in them lead to.
     */
    static final int COLLECTING_RUNS = 2;

    static final RetrySignal RERUN_LOGGED = new RetrySignal(RetrySignal.Reason.RERUN_LOGGED, -1);

    /** The arguments of {@code record}, a semantic record image ({@link SemanticRecordLayout}), decoded afresh. */
    Object[] decodeArguments(MethodRegistry.Entry entry, byte[] record,
                                     SemanticLogReader.Record recovered) {
        try {
            return engine.codec.decode(record, SemanticRecordLayout.HEADER_LENGTH,
                    SemanticRecordLayout.argumentsLength(record));
        } catch (AsymNvmException e) {
            if (e.errorCode() != ErrorCode.CLASS_NOT_REGISTERED) {
                throw e;
            }
            // a record from the backend names a class this frontend does not allow: it was never loaded
            throw new AsymNvmException(ErrorCode.CLASS_NOT_REGISTERED, (recovered != null
                    ? "cannot recover frontend " + engine.frontendId + ": semantic record of tx " + recovered.txId()
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

    /** The semantic record image of a call of {@code entry} with {@code args}, its header not filled yet. */
    byte[] encodeArguments(MethodRegistry.Entry entry, Object[] args) {
        byte[] record;
        try {
            record = engine.codec.encodeRecord(args);
        } catch (AsymNvmException e) {
            throw new AsymNvmException(e.errorCode(), "call of " + entry.signature() + " refused before anything "
                    + "was logged: " + e.detail(), e);
        }
        int length = SemanticRecordLayout.argumentsLength(record);
        if (length > engine.maxArgumentBytes) {
            throw new IllegalArgumentException("arguments of " + entry.signature() + " serialize to "
                    + length + " bytes, limit " + engine.maxArgumentBytes);
        }
        return record;
    }

    @Override
    public void handle(RetrySignal signal, CallPages callPages) {
        switch (signal.reason) {
            case PAGE_MISS -> {
                if (signal.pages != null && signal.pages.length > 1) {
                    engine.fetcher.fetchAll(signal.pages, callPages);
                    return;
                }
                long token = engine.cache.fetchToken();
                byte[] page = engine.fetcher.fetch(signal.pageIndex);
                if (page != null) {
                    callPages.keep(signal.pageIndex, page, token);
                }
            }
            case NEED_SLAB -> engine.slabs.grantSlab();
            case RING_FULL -> engine.shipper.awaitRingSpace();
            default -> throw new IllegalStateException("unknown retry reason " + signal.reason);
        }
    }

    // --- what LocklessReads sees of the engine ---

    @Override
    public PageCache cache() {
        return engine.cache;
    }

    @Override
    public void checkServing() {
        engine.checkUsable();
    }

    @Override
    public void awaitDurable(long txId) {
        engine.commit.awaitDurable(txId);
    }

    @Override
    public void countRetry() {
        engine.retries.incrementAndGet();
    }

    @Override
    public void countAbort() {
        engine.aborts.incrementAndGet();
    }
}
