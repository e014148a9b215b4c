package io.asymnvm.core.fabric;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Responder-side state of one connection: which regions it was granted (by the control plane), the ranges it
 * wrote since its last FLUSH, its stamp word, and whether it has been fenced by a newer session of the same
 * frontend. Operations of one session are executed one at a time.
 */
public final class NicSession {
    private static final AtomicLong IDS = new AtomicLong();
    private static final int MAX_DIRTY_RANGES = 1024;

    private final long id = IDS.incrementAndGet();
    private final Map<Integer, Access> grants = new ConcurrentHashMap<>();
    private final List<long[]> dirty = new ArrayList<>();
    private volatile int frontendId = -1;
    private volatile long attachEpoch;
    private volatile String fencedReason;
    private StampGuard stampGuard = StampGuard.NONE;
    private volatile int stampRegion = -1;
    private volatile long stampOffset;

    // --- authentication: in-process sessions need none; a tcp session holds at most one unused challenge ---
    private final boolean inProcess;
    private final java.util.concurrent.atomic.AtomicReference<byte[]> challenge =
            new java.util.concurrent.atomic.AtomicReference<>();

    /** A session of a connection from another process (tcp): it must authenticate to attach. */
    public NicSession() {
        this(false);
    }

    private NicSession(boolean inProcess) {
        this.inProcess = inProcess;
    }

    /** A session of the in-process ({@code local}) fabric: the caller already runs inside the node. */
    public static NicSession inProcess() {
        return new NicSession(true);
    }

    public boolean isInProcess() {
        return inProcess;
    }

    /** Remembers the nonce of the challenge just issued, replacing an unused one. */
    public void offerChallenge(byte[] nonce) {
        challenge.set(nonce.clone());
    }

    /** The nonce of the last challenge, which no later attach may use again; null if none is outstanding. */
    public byte[] takeChallenge() {
        return challenge.getAndSet(null);
    }

    public long id() {
        return id;
    }

    public int frontendId() {
        return frontendId;
    }

    public long attachEpoch() {
        return attachEpoch;
    }

    /** Binds the session to a frontend identity (control plane, on attach). */
    public void bind(int frontendId, long attachEpoch) {
        this.frontendId = frontendId;
        this.attachEpoch = attachEpoch;
    }

    public void grant(int regionId, Access access) {
        grants.put(regionId, access);
    }

    /** What the control plane granted this session so far (a read-only view; rdma hands out keys from it). */
    public Map<Integer, Access> grants() {
        return java.util.Collections.unmodifiableMap(grants);
    }

    public void revokeAll() {
        grants.clear();
    }

    /** After a FLUSH, the responder stores the flush's stamp value at this location. */
    public void stampAt(int regionId, long offset) {
        stampAt(regionId, offset, StampGuard.NONE);
    }

    /**
     * After a FLUSH, the responder stores the flush's stamp value at this location, if {@code guard} admits the
     * move from the value stored there; a stamp never moves the value backwards.
     */
    public void stampAt(int regionId, long offset, StampGuard guard) {
        this.stampRegion = regionId;
        this.stampOffset = offset;
        this.stampGuard = guard;
    }

    StampGuard stampGuard() {
        return stampGuard;
    }

    int stampRegion() {
        return stampRegion;
    }

    long stampOffset() {
        return stampOffset;
    }

    // --- closing from the control plane (a mirror's promotion closes every frontend connection) ---
    private volatile Runnable disconnector;

    /** The transport's way to close this session's connection (set once by the transport). */
    public void onDisconnect(Runnable closeConnection) {
        this.disconnector = closeConnection;
    }

    /**
     * Fences the session and closes its connection: the peer sees {@code CONNECTION_LOST} and connects again (a
     * transport that set no {@link #onDisconnect} hook only fences).
     */
    public void disconnect(String reason) {
        fence(reason);
        Runnable r = disconnector;
        if (r != null) {
            r.run();
        }
    }

    /** Refuses every later operation of this session with {@code STALE_EPOCH}. */
    public void fence(String reason) {
        this.fencedReason = reason;
    }

    public boolean isFenced() {
        return fencedReason != null;
    }

    void checkAccess(int regionId, boolean write) {
        String fenced = fencedReason;
        if (fenced != null) {
            throw new AsymNvmException(ErrorCode.STALE_EPOCH, "session fenced: " + fenced);
        }
        Access a = grants.get(regionId);
        if (a == null) {
            throw new AsymNvmException(frontendId < 0 ? ErrorCode.NOT_ATTACHED : ErrorCode.ACCESS_DENIED,
                    "region " + regionId + " not granted to " + describe());
        }
        if (write && !a.allowsWrite()) {
            throw new AsymNvmException(ErrorCode.ACCESS_DENIED, "region " + regionId + " is read-only for "
                    + describe());
        }
    }

    String describe() {
        return frontendId < 0 ? "unattached session " + id : "frontend " + frontendId + " (session " + id + ")";
    }

    synchronized void recordWrite(int regionId, long backingOffset, long length) {
        if (!dirty.isEmpty()) {
            long[] last = dirty.get(dirty.size() - 1);
            if (last[0] == regionId && last[2] == backingOffset) {
                last[2] = backingOffset + length;
                return;
            }
        }
        if (dirty.size() >= MAX_DIRTY_RANGES) {
            coalescePerRegion();
        }
        dirty.add(new long[] {regionId, backingOffset, backingOffset + length});
    }

    /** Too many ranges: replace them by one covering range per region (persisting more, never less). */
    private void coalescePerRegion() {
        Map<Long, long[]> byRegion = new java.util.LinkedHashMap<>();
        for (long[] r : dirty) {
            byRegion.merge(r[0], r.clone(), (a, b) -> new long[] {a[0], Math.min(a[1], b[1]), Math.max(a[2], b[2])});
        }
        dirty.clear();
        dirty.addAll(byRegion.values());
    }

    synchronized List<long[]> drainDirty() {
        List<long[]> out = new ArrayList<>(dirty);
        dirty.clear();
        return out;
    }
}
