package io.asymnvm.frontend.tx;

import io.asymnvm.frontend.Transaction;
import io.asymnvm.frontend.alloc.FreshMemory;
import io.asymnvm.frontend.cache.PageCache;
import io.asymnvm.frontend.log.RedoBuffer;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One attempt of a transaction: its private write set (copy-on-write page images plus the list of writes for
 * redo), and the newest unapplied writer among the pages it read. Reads consult the private pages first, then
 * the page cache; a missing page raises a {@link RetrySignal}. Confined to the thread running the method, which
 * holds the execution lock, or, for a <em>lockless</em> read-only attempt ({@link LocklessReads}), does not: then
 * every page taken from the cache is validated against the cache's change sequence at once (a change raises a
 * {@code CONFLICT} signal, so the method never goes on with a mixed view), and anything that would change state
 * (a write, an allocation, a root) raises a {@code WRITES} signal before it has any effect.
 *
 * <p>Unlocked attempts (lockless read-only and {@linkplain OptimisticWriters optimistic} writers) validate per
 * page: a page is accepted only if its version is at most the sequence value {@code seen} the attempt started at
 * and no invalidation happened since (else {@code CONFLICT}), so the body always computes on the state as of
 * {@code seen}. An optimistic writer also records the version of every page it read (its read set, checked again
 * under the lock by {@link #validateReadSet}) and raises {@code LOCK_NEEDED} before anything only the lock may do
 * (allocate, free, set a root or the directory, name a root, use a page the cache does not hold).
 */
public final class TransactionContext implements Transaction, FreshMemory {
    private static final ThreadLocal<TransactionContext> CURRENT = new ThreadLocal<>();

    private final TransactionEngine engine;
    private final PageCache cache;
    private final int pageSize;
    /** Copy-on-write page images; null until the first write (a read-only attempt never allocates it). */
    private Map<Long, byte[]> privatePages;
    /**
     * The write set as non-overlapping ranges by address, each holding the latest bytes written there: a range
     * written twice (a freshly allocated block zeroed, then filled) is logged once, so the redo of a transaction
     * is at most the bytes it changed, not the sum of its writes. Null until the first write.
     */
    private TreeMap<Long, RedoBuffer.Write> writes;
    /** {@link #writes()} as a list, until the next write. */
    private List<RedoBuffer.Write> writeList;
    private long newestDirtyRead;
    private final CallPages callPages;
    private RetrySignal signal;
    private boolean createdNamedRoot;
    /** Lockless attempt: the cache sequence value it started at (even), and the fetch token of its kept pages. */
    private final boolean lockless;
    /** An optimistic writer's attempt (also started at {@code seen}); its read set is page index to version. */
    private final boolean optimistic;
    private final ReadSet readSet;
    private final long seen;
    private final long seenToken;
    /** The naive baseline: every page read remotely, no cache (null in the design's mode). */
    private final NaiveAccess naive;
    /** A collecting attempt's misses, made at its first miss; see {@link MissCollector}. */
    private MissCollector misses;
    /** Whether this attempt collects its misses (false: the first miss abandons the attempt). */
    private boolean collecting;
    // ---- cache-hit reads (issue 8 goal 1): the last cache page this attempt took, taken again without a lookup.
    // Only pages taken from the cache are kept here (validated when taken); a private page takes precedence.
    private long lastPageIndex = -1;
    private byte[] lastPage;
    /** Heap ranges known to read as zero at the backend (start to end), told by the allocator. */
    private TreeMap<Long, Long> knownZero;

    TransactionContext(TransactionEngine engine, CallPages callPages) {
        this(engine, callPages, false, false, 0, 0);
    }

    /** A lockless read-only attempt that started at cache sequence {@code seen} and fetch token {@code token}. */
    TransactionContext(TransactionEngine engine, CallPages callPages, long seen, long token) {
        this(engine, callPages, true, false, seen, token);
    }

    /** An optimistic writer's attempt that started at cache sequence {@code seen} ({@link OptimisticWriters}). */
    static TransactionContext optimistic(TransactionEngine engine, CallPages callPages,
                                         long seen) {
        return new TransactionContext(engine, callPages, false, true, seen, 0);
    }

    private TransactionContext(TransactionEngine engine, CallPages callPages, boolean lockless,
                               boolean optimistic, long seen, long token) {
        this.engine = engine;
        this.callPages = callPages;
        this.cache = engine.cache();
        this.pageSize = cache.pageSize();
        this.lockless = lockless;
        this.optimistic = optimistic;
        this.readSet = optimistic ? new ReadSet() : null;
        this.seen = seen;
        this.seenToken = token;
        this.naive = engine.naive();
    }

    /** Whether this attempt runs without the execution lock (a lockless read-only attempt). */
    boolean lockless() {
        return lockless;
    }

    /** Whether this attempt is an optimistic writer's, running its body without the execution lock. */
    public boolean optimistic() {
        return optimistic;
    }

    /** Unlocked: whether no invalidation happened since the attempt started (checked again at its end). */
    boolean stillValid() {
        VarHandle.acquireFence(); // the reads of cache contents before this stay before the check
        return cache.invalidatedAt() <= seen;
    }

    /**
     * Optimistic writer, under the execution lock: whether every page it read still has the version it read, no
     * invalidation happened since it started, and every range it writes is still in memory this frontend may write.
     * Then running its body now, on the current cache, would read and write exactly what this attempt did.
     */
    boolean validateReadSet() {
        if (!stillValid()) {
            return false;
        }
        if (!readSet.unchangedIn(cache)) {
            return false;
        }
        if (writes == null) {
            return true; // an attempt that failed before writing anything: its reads were what it decided on
        }
        for (RedoBuffer.Write w : writes.values()) {
            if (!engine.allocator().owns(w.address(), w.length())) {
                return false; // its slab was retired or returned meanwhile
            }
        }
        return true;
    }

    /**
     * Lockless: the attempt may not change anything; abandons it before the change has any effect. An optimistic
     * writer may write ({@link #write}) but not change allocator or root state: that runs under the lock.
     */
    private void refuseChange() {
        if (lockless) {
            throw raise(new RetrySignal(RetrySignal.Reason.WRITES, -1));
        }
        if (optimistic) {
            throw raise(new RetrySignal(RetrySignal.Reason.LOCK_NEEDED, -1));
        }
    }

    /** Whether the calling thread is running a transaction (nested transactional calls join it). */
    public static boolean active() {
        return CURRENT.get() != null;
    }

    /** The transaction of the calling thread; outside one, an {@link IllegalStateException}. */
    public static TransactionContext current() {
        TransactionContext c = CURRENT.get();
        if (c == null) {
            throw new IllegalStateException("no persistent transaction on this thread: call this from a "
                    + "@PersistentTransaction method invoked through AsymNvm.transactional(...)");
        }
        return c;
    }

    void bind() {
        CURRENT.set(this);
    }

    void unbind() {
        CURRENT.set(null); // not remove(): the thread's entry stays, so the next call's active() allocates none
    }

    RetrySignal signal() {
        return signal;
    }

    /** Makes this attempt a collecting one: misses are recorded and read as zero pages ({@link MissCollector}). */
    void collectMisses() {
        collecting = true;
    }

    /** Whether this collecting attempt missed a page: its outcome is discarded, {@link #missSignal} retries it. */
    @Override
    public boolean doomed() {
        return misses != null && misses.doomed();
    }

    RetrySignal missSignal() {
        return misses.signal();
    }

    @Override
    public void knownZero(long address, long length) {
        if (knownZero == null) {
            knownZero = new TreeMap<>();
        }
        knownZero.put(address, Math.max(address + length, knownZero.getOrDefault(address, address)));
    }

    /**
     * Whether every byte of page {@code pageIndex} is known to be zero at the backend or lies in
     * {@code [writeFrom, writeTo)}, the range being written: then its bytes need not be fetched.
     */
    private boolean fresh(long pageIndex, long writeFrom, long writeTo) {
        if (knownZero == null && writeTo - writeFrom < pageSize) {
            return false;
        }
        long at = pageIndex * pageSize;
        long end = at + pageSize;
        while (at < end) {
            if (at >= writeFrom && at < writeTo) {
                at = writeTo;
                continue;
            }
            Map.Entry<Long, Long> z = knownZero == null ? null : knownZero.floorEntry(at);
            if (z == null || z.getValue() <= at) {
                return false;
            }
            at = z.getValue();
        }
        return true;
    }

    RetrySignal raise(RetrySignal s) {
        if (signal == null) {
            signal = s;
        }
        throw s;
    }

    /**
     * The write set in address order, no two ranges overlapping: a list made once per attempt after its last write
     * (the commit asks for it several times), made again if the attempt writes after it was asked for.
     */
    List<RedoBuffer.Write> writes() {
        if (writes == null) {
            return List.of();
        }
        if (writeList == null) {
            writeList = new ArrayList<>(writes.values());
        }
        return writeList;
    }

    /** Whether this attempt wrote anything. */
    boolean hasWrites() {
        return writes != null && !writes.isEmpty();
    }

    /**
     * Records the {@code length} bytes at {@code offset} of {@code bytes} as written at {@code address}, cutting
     * away what they overwrite of earlier writes. The bytes are referred to, not copied: either this attempt's
     * private page holding them (every later write to the page lands there too, and a later write over them cuts
     * them away here, so what is left of a write always reads its own bytes) or an array of the write's own.
     */
    private void record(long address, byte[] bytes, int offset, int length) {
        writeList = null;
        if (writes == null) {
            writes = new TreeMap<>();
        }
        long end = address + length;
        RedoBuffer.Write tail = null;
        Map.Entry<Long, RedoBuffer.Write> before = writes.lowerEntry(address);
        if (before != null) {
            RedoBuffer.Write w = before.getValue();
            long wEnd = w.address() + w.length();
            if (wEnd > address) {
                writes.put(w.address(), slice(w, w.address(), address));
                if (wEnd > end) {
                    tail = slice(w, end, wEnd);
                }
            }
        }
        for (Iterator<RedoBuffer.Write> it = writes.subMap(address, true, end, false).values().iterator();
             it.hasNext(); ) {
            RedoBuffer.Write w = it.next();
            long wEnd = w.address() + w.length();
            it.remove();
            if (wEnd > end) {
                tail = slice(w, end, wEnd);
            }
        }
        if (tail != null) {
            writes.put(end, tail);
        }
        writes.put(address, new RedoBuffer.Write(address, bytes, offset, length));
    }

    /** The part {@code [from, to)} of write {@code w}, on the same bytes. */
    private static RedoBuffer.Write slice(RedoBuffer.Write w, long from, long to) {
        return new RedoBuffer.Write(from, w.bytes(), w.offset() + (int) (from - w.address()), (int) (to - from));
    }

    Map<Long, byte[]> privatePages() {
        return privatePages == null ? Map.of() : privatePages;
    }

    long newestDirtyRead() {
        return newestDirtyRead;
    }

    TransactionEngine engine() {
        return engine;
    }

    private byte[] page(long pageIndex) {
        return page(pageIndex, 0, 0);
    }

    /** The page as this attempt sees it; {@code [writeFrom, writeTo)} is about to be written (empty: a read). */
    private byte[] page(long pageIndex, long writeFrom, long writeTo) {
        if (privatePages != null) {
            byte[] p = privatePages.get(pageIndex);
            if (p != null) {
                return p;
            }
        }
        if (naive != null) {
            return naive.read(pageIndex);
        }
        if (misses != null && !misses.mayContinue()) {
            throw raise(misses.signal()); // doomed and running on for too long: stop it here
        }
        if (pageIndex == lastPageIndex) {
            return lastPage; // taken from the cache (and validated) earlier in this attempt: the same view
        }
        PageCache.Page cached = cache.get(pageIndex);
        if (cached == null) {
            byte[] fetched = callPages.get(pageIndex);
            if (fetched != null) {
                if (optimistic) {
                    // a page the cache does not hold has no version to validate at commit: use it under the lock
                    throw raise(new RetrySignal(RetrySignal.Reason.LOCK_NEEDED, pageIndex));
                }
                if (lockless && (callPages.stale(pageIndex, cache) || !stillValid())) {
                    // a page kept aside is current only while neither the cache nor this page's once-dirty copy
                    // was dropped since it was fetched, and nothing was invalidated since the attempt started
                    throw raise(new RetrySignal(RetrySignal.Reason.CONFLICT, pageIndex));
                }
                return fetched;
            }
            if (fresh(pageIndex, writeFrom, writeTo)) {
                return new byte[pageSize]; // a fresh block: what the backend holds there is zero or overwritten
            }
            if (collecting) {
                if (misses == null) {
                    misses = new MissCollector(pageSize);
                }
                return misses.placeholder(pageIndex);
            }
            throw raise(new RetrySignal(RetrySignal.Reason.PAGE_MISS, pageIndex));
        }
        if ((lockless || optimistic) && (cached.version() > seen || !stillValid())) {
            // changed since the attempt started: the state as of seen is gone, run again on a newer one
            throw raise(new RetrySignal(RetrySignal.Reason.CONFLICT, pageIndex));
        }
        if (optimistic) {
            readSet.putIfAbsent(pageIndex, cached.version());
        }
        newestDirtyRead = Math.max(newestDirtyRead, cached.lastWriter());
        lastPageIndex = pageIndex;
        lastPage = cached.bytes();
        return lastPage;
    }

    private byte[] privatePage(long pageIndex, long writeFrom, long writeTo) {
        if (privatePages == null) {
            privatePages = new HashMap<>();
        }
        Long key = pageIndex; // boxed once for the lookup and the insert
        byte[] p = privatePages.get(key);
        if (p == null) {
            p = page(pageIndex, writeFrom, writeTo).clone();
            privatePages.put(key, p);
        }
        return p;
    }

    @Override
    public void read(long address, byte[] dst, int offset, int length) {
        engine.checkReadable(address, length);
        while (length > 0) {
            long pageIndex = address / pageSize;
            int inPage = (int) (address % pageSize);
            int n = Math.min(length, pageSize - inPage);
            System.arraycopy(page(pageIndex), inPage, dst, offset, n);
            address += n;
            offset += n;
            length -= n;
        }
    }

    // ---- cache-hit reads (issue 8 goal 1): a long or int inside one page is read from the page array itself,
    // with no byte[] or ByteBuffer per access; one that straddles two pages takes the general path.
    private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class,
            ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class,
            ByteOrder.LITTLE_ENDIAN);

    @Override
    public long readLong(long address) {
        engine.checkReadable(address, Long.BYTES);
        int inPage = (int) (address % pageSize);
        if (inPage > pageSize - Long.BYTES) {
            return Transaction.super.readLong(address);
        }
        return (long) LONG_LE.get(page(address / pageSize), inPage);
    }

    @Override
    public int readInt(long address) {
        engine.checkReadable(address, Integer.BYTES);
        int inPage = (int) (address % pageSize);
        if (inPage > pageSize - Integer.BYTES) {
            return Transaction.super.readInt(address);
        }
        return (int) INT_LE.get(page(address / pageSize), inPage);
    }

    /**
     * A whole page is returned without a copy: this attempt's private page if it wrote one (its own writes are
     * visible), else the cached page. Nothing changes a page array in place while a method body runs on it: writes
     * of this attempt go to its private copy, and the cache replaces or drops arrays, it never rewrites one.
     */
    @Override
    public byte[] readShared(long address, int length) {
        if (length != pageSize || address % pageSize != 0) {
            return read(address, length);
        }
        engine.checkReadable(address, length);
        return page(address / pageSize);
    }

    @Override
    public void write(long address, byte[] src, int offset, int length) {
        checkWrite(address, length);
        if (length == 0) {
            return;
        }
        int first = (int) (address % pageSize);
        if (first + length <= pageSize) {
            // inside one page: the private page holds the bytes and the write set refers to them there
            byte[] page = privatePage(address / pageSize, address, address + length);
            System.arraycopy(src, offset, page, first, length);
            record(address, page, first, length);
            return;
        }
        byte[] copy = Arrays.copyOfRange(src, offset, offset + length);
        long at = address;
        int done = 0;
        while (done < length) {
            long pageIndex = at / pageSize;
            int inPage = (int) (at % pageSize);
            int n = Math.min(length - done, pageSize - inPage);
            System.arraycopy(copy, done, privatePage(pageIndex, address, address + length), inPage, n);
            at += n;
            done += n;
        }
        record(address, copy, 0, length);
    }

    /**
     * Takes a structure's changed copy of a page as this attempt's private page instead of copying it again (issue
     * 8: one page copy per changed page, not two), when that is the same as {@link #write} of each range: the
     * attempt has no private copy of the page yet and its view of the page is still {@code origin} (the very array
     * the copy was made from), so the copy differs from that view only inside the ranges. Each range is checked
     * and logged as {@link #write} does. Otherwise it writes the ranges.
     */
    @Override
    public boolean writeChanged(long address, byte[] image, byte[] origin, int[] from, int[] to, int ranges) {
        long pageIndex = address / pageSize;
        if (lockless || naive != null || image.length != pageSize || address % pageSize != 0 || origin == null
                || (privatePages != null && privatePages.containsKey(pageIndex))
                || page(pageIndex) != origin) {
            return Transaction.super.writeChanged(address, image, origin, from, to, ranges);
        }
        for (int i = 0; i < ranges; i++) {
            int length = to[i] - from[i];
            if (from[i] < 0 || length < 0 || to[i] > pageSize) {
                throw new IllegalArgumentException("range [" + from[i] + ", " + to[i] + ") outside a page of "
                        + pageSize + " bytes");
            }
            checkWrite(address + from[i], length);
        }
        if (privatePages == null) {
            privatePages = new HashMap<>();
        }
        privatePages.put(pageIndex, image);
        for (int i = 0; i < ranges; i++) {
            if (to[i] > from[i]) {
                record(address + from[i], image, from[i], to[i] - from[i]);
            }
        }
        return true;
    }

    /** What {@link #write} checks before a write of {@code [address, address + length)}. */
    private void checkWrite(long address, int length) {
        if (lockless) {
            refuseChange();
        }
        if (optimistic) {
            engine.checkReadable(address, length);
            if (!ownedNow(address, length)) {
                throw raise(new RetrySignal(RetrySignal.Reason.LOCK_NEEDED, address / pageSize)); // the lock reports it
            }
        } else {
            engine.checkWritable(address, length);
        }
    }

    /**
     * Optimistic writer: whether the range is in slabs this frontend owns, read without the lock (the allocator's
     * sets may change under a grant meanwhile, so a wrong or failed answer only sends the call to the lock, and
     * {@link #validateReadSet} asks again under it).
     */
    private boolean ownedNow(long address, long length) {
        try {
            return engine.allocator().owns(address, length);
        } catch (RuntimeException e) {
            return false;
        }
    }

    @Override
    public void preferCached(long address) {
        long pageIndex = address / pageSize;
        if (!lockless && !optimistic) {
            cache.prefer(pageIndex);
        } else if (!cache.isPreferred(pageIndex)) {
            engine.deferPreference(pageIndex); // moving pages between the cache's parts needs the lock
        }
    }

    @Override
    public long allocate(long size) {
        refuseChange();
        return engine.allocator().allocate(this, size);
    }

    @Override
    public void free(long address) {
        refuseChange();
        engine.allocator().free(this, address);
    }

    @Override
    public long root() {
        return engine.allocator().root(this);
    }

    @Override
    public void setRoot(long address) {
        refuseChange();
        engine.allocator().setRoot(this, address);
    }

    /** This frontend's root directory address (0 if none); used by named roots. */
    public long directory() {
        return engine.allocator().directory(this);
    }

    public void setDirectory(long address) {
        refuseChange();
        engine.allocator().setDirectory(this, address);
    }

    /**
     * Named roots: this attempt created a structure and its directory entry. A read-only method may do so on the
     * first use of a structure opened by name; the engine then commits it as an ordinary transaction.
     */
    public void noteNamedRootCreated() {
        refuseChange();
        createdNamedRoot = true;
    }

    boolean createdNamedRoot() {
        return createdNamedRoot;
    }

    /** Signals that the allocator needs a new slab (granted outside the lock, then the method runs again). */
    RuntimeException needSlab() {
        throw raise(new RetrySignal(RetrySignal.Reason.NEED_SLAB, -1));
    }
}
