package io.asymnvm.backend.mirror;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.asymnvm.backend.log.FrontendLog;
import io.asymnvm.backend.slab.SlabTable;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.auth.AttachProof;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.ControlBlockLayout.Checkpoint;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.PostingEpoch;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.core.region.PersistentRegion;
import io.asymnvm.recovery.log.RingReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The backend's stream to one mirror (DESIGN §6, Rowan-style: one sequential stream per mirror, off the commit
 * path), on a thread of its own.
 *
 * <p>It attaches as the mirror's replication peer (PEER_ATTACH with this image's identity and epoch), then copies
 * the image: it takes the slab table T0 and every frontend's checkpoint C0 first, starts streaming redo from C0's
 * redo heads, copies the heap in chunks (streaming the redo that accumulated between chunks, so the ring is read
 * before frontends reuse it), notes each frontend's applied transaction as the copy ends (the mirror is in sync
 * once it applied that much), and sends COPY_DONE with C0 and T0: the copy is fuzzy, which is fine because the
 * mirror replays from C0 and redo holds absolute bytes.
 *
 * <p>Then, in a loop: read the slab table, then each frontend's durable checkpoint R (its redo head is past batches
 * the backend validated and applied); write the redo ring bytes between what was shipped and R at the same ring
 * positions (validating each entry as it is read: a lapped or invalid entry means this mirror fell behind: it is
 * marked out of sync and shipping to it stops); never write position q unless {@code q - capacity} is below the
 * mirror's published redo head (read from its control block; otherwise ship less and wait); FLUSH; then REPLICATE
 * SHIPPED with the limits and the table, which lets the mirror apply up to them. A lost connection is retried
 * (with a full copy again); a refused attach (other image, stale epoch, wrong secret) stops the shipper.
 */
public final class MirrorShipper implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MirrorShipper.class);
    /** Bytes per WRITE at most; also at most a redo ring's capacity, the mirror's largest legal request. */
    private static final int MAX_CHUNK = 256 << 10;
    private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long LAG_READ_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    /** Where the shipper stands. */
    public enum Phase { CONNECTING, COPYING, STREAMING, OUT_OF_SYNC, REFUSED, STOPPED }

    private final String name;
    private final Fabric fabric;
    private final PersistentRegion region;
    private final Superblock sb;
    private final FrontendLog[] logs;
    private final SlabTable slabs;
    private final ReplicationService node;
    private final byte[] secret;
    private final long[] shipped;
    private final int chunk;
    private final long[] mirrorApplied;
    private final AtomicLong batches = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong copies = new AtomicLong();
    private volatile long lastShipNanos = System.nanoTime();
    private volatile Phase phase = Phase.CONNECTING;
    private volatile int mirrorState = ReplicationLayout.STATE_CATCHING_UP;
    private volatile String problem;
    private volatile boolean running = true;
    private volatile FabricConnection conn;
    /** The backend's slab grants and returns {slab, ownerWord, barrier} not yet sent, in order. */
    private final java.util.concurrent.ConcurrentLinkedQueue<long[]> slabEvents =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    private volatile long[] copyBase;
    private volatile long[] reportedEpochs;
    /** Sessions begun (each begins with a PEER_ATTACH, which pauses the mirror: catching up until a new copy). */
    private volatile long sessions;
    /** The session whose FRONTENDS report was last begun (set before the report reads the posting epochs). */
    private volatile long reportingSession;
    private Thread thread;
    /** Non-null for an ASYNC mirror: semantic records shipped too, periodically, within bounds (issue 9). */
    private final AsyncShipping async;

    MirrorShipper(String name, Fabric fabric, PersistentRegion region, Superblock sb, FrontendLog[] logs,
                  SlabTable slabs, ReplicationService node, byte[] secret, AsyncShipping async) {
        this.async = async;
        this.name = name;
        this.fabric = fabric;
        this.region = region;
        this.sb = sb;
        this.logs = logs;
        this.slabs = slabs;
        this.node = node;
        this.secret = secret;
        this.shipped = new long[logs.length];
        this.chunk = (int) Math.min(MAX_CHUNK, sb.redoRingCapacity());
        this.mirrorApplied = new long[logs.length];
        this.waivedEpoch = new long[logs.length];
        this.heldEpoch = new long[logs.length];
        this.detachedHeldEpoch = new long[logs.length];
    }

    public String name() {
        return name;
    }

    public Phase phase() {
        return phase;
    }

    /** The mirror's state as it last reported it (catching up, in sync). */
    public int mirrorState() {
        return mirrorState;
    }

    /** Why shipping stopped (refused, out of sync), or the last connection error; null if none. */
    public String problem() {
        return problem;
    }

    public long batchesShipped() {
        return batches.get();
    }

    public long bytesShipped() {
        return bytes.get();
    }

    /** Frontend {@code f}'s lag in transactions: applied here minus applied at the mirror (as last read). */
    public long lagTransactions(int f) {
        return Math.max(0, logs[f].checkpoint().appliedTxId() - mirrorApplied[f]);
    }

    /** True for an ASYNC mirror (frontends do not post to it; the backend ships their semantic records). */
    public boolean isAsync() {
        return async != null;
    }

    /** An ASYNC mirror whose lag exceeds a bound of {@link AsyncLagBounds} (false for a SYNC mirror). */
    public boolean behind() {
        return async != null && async.behind();
    }

    /** ASYNC: the most acknowledged transactions of one frontend not yet shipped (0 for a SYNC mirror). */
    public long unshippedTransactions() {
        return async == null ? 0 : async.maxUnshippedTx();
    }

    /** ASYNC: milliseconds since the oldest unshipped acknowledged transaction was seen (0 for a SYNC mirror). */
    public long lagMillis() {
        return async == null ? 0 : async.lagMillis();
    }

    /** ASYNC: how many times the lag exceeded a bound (0 for a SYNC mirror). */
    public long boundExceeded() {
        return async == null ? 0 : async.boundExceeded();
    }

    public long millisSinceLastShip() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastShipNanos);
    }

    void start() {
        thread = new Thread(this::run, "asymnvm-shipper-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        while (running) {
            try {
                session();
            } catch (AsymNvmException e) {
                if (!running) {
                    break;
                }
                if (e.errorCode() == ErrorCode.IDENTITY_MISMATCH || e.errorCode() == ErrorCode.STALE_EPOCH
                        || e.errorCode() == ErrorCode.AUTH_FAILED || e.errorCode() == ErrorCode.AUTH_REQUIRED
                        || e.errorCode() == ErrorCode.NOT_PRIMARY) {
                    stop(Phase.REFUSED, "mirror " + name + " refused replication: " + e.getMessage());
                    break;
                }
                problem = e.getMessage();
                LOG.warn("shipping to mirror {} interrupted ({}); reconnecting", name, e.getMessage());
                phase = Phase.CONNECTING;
                closeConnection();
                LockSupport.parkNanos(RETRY_NANOS);
            } catch (OutOfSync e) {
                stop(Phase.OUT_OF_SYNC, e.getMessage());
                break;
            } catch (RuntimeException e) {
                problem = e.toString();
                LOG.error("shipping to mirror {} failed; reconnecting", name, e);
                phase = Phase.CONNECTING;
                closeConnection();
                LockSupport.parkNanos(RETRY_NANOS);
            }
        }
        closeConnection();
    }

    private void stop(Phase p, String why) {
        phase = p;
        problem = why;
        running = false;
        LOG.error("{}; shipping to it stopped", why);
    }

    private void session() {
        sessions++;
        FabricConnection c = fabric.connect();
        conn = c;
        byte[] nonce = c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_CHALLENGE, 0, 0)).await().bytes();
        long epoch = node.epoch();
        byte[] proof = proof(nonce, ReplicationLayout.PURPOSE_PEER_ATTACH, epoch);
        ReplicationLayout.PeerReply reply = ReplicationLayout.PeerReply.decode(
                c.call(ReplicationLayout.peerAttach(epoch, sb.identity(), proof)).await().bytes());
        mirrorState = reply.state();
        phase = Phase.COPYING;
        copy(c);
        phase = Phase.STREAMING;
        long lagReadAt = 0;
        while (running) {
            reportFrontends(c, false);
            if (async != null) {
                asyncStep(c);
            } else if (!shipOnce(c, true)) {
                if (System.nanoTime() - lagReadAt > LAG_READ_NANOS) {
                    readMirrorApplied(c); // the lag counters follow the mirror's replay while idle too
                    reportFrontends(c, true); // and its state: a frontend's MIRROR_POSTING may have completed it
                    lagReadAt = System.nanoTime();
                }
                LockSupport.parkNanos(IDLE_PARK_NANOS);
            }
        }
    }

    /** ASYNC: when the mirror's control blocks were last read (lag counters, heartbeat). */
    private long asyncReadAt;

    /** ASYNC (see {@link AsyncShipping}): a pass when due (redo, semantic records, FLUSH, SHIPPED), else a sample. */
    private void asyncStep(FabricConnection c) {
        long now = System.nanoTime();
        if (async.due(now)) {
            boolean any = shipOnce(c, false); // redo first: records it makes applied need no shipping
            any |= shipSemantic(c);
            long[][] events = drainSlabEvents();
            if (any || events.length > 0) {
                sendShipped(c, shipped.clone(), events);
            }
            async.passDone(now);
            if (any) {
                return;
            }
        } else {
            async.sample(0);
        }
        if (now - asyncReadAt > LAG_READ_NANOS) {
            readMirrorApplied(c);
            asyncReadAt = now;
        }
        LockSupport.parkNanos(IDLE_PARK_NANOS);
    }

    /** ASYNC: writes each frontend's durable semantic records the mirror lacks; returns whether any were. */
    private boolean shipSemantic(FabricConnection c) {
        boolean any = false;
        for (int f = 0; f < logs.length; f++) {
            long to = async.durable(f);
            byte[] block = c.read(RegionIds.control(f), 0, ControlBlockLayout.READ_LENGTH).await().bytes();
            long mirrorSemHead = ControlBlockLayout.publishedCheckpoint(block).semHead();
            long from = async.from(f, mirrorSemHead);
            if (to <= from) {
                continue;
            }
            RingReader reader = logs[f].semanticReader();
            AtomicLong records = new AtomicLong();
            long reached = copyRing(c, f, reader, RegionIds.semantic(f), from, to, mirrorSemHead + reader.capacity(),
                    "semantic", records);
            async.shipped(f, reached, records.get());
            any |= reached > from;
        }
        return any;
    }

    private void readMirrorApplied(FabricConnection c) {
        for (int f = 0; f < logs.length; f++) { // also the heartbeat: a lost or fenced peer session fails here
            byte[] block = c.read(RegionIds.control(f), 0, ControlBlockLayout.READ_LENGTH).await().bytes();
            mirrorApplied[f] = ControlBlockLayout.publishedCheckpoint(block).appliedTxId();
        }
    }

    private byte[] proof(byte[] nonce, int purpose, long arg) {
        return secret == null ? new byte[ControlMessageLayout.PROOF_LENGTH]
                : AttachProof.compute(secret, nonce, purpose, arg);
    }

    /** A grant or return on this backend (called in order, under the slab table's monitor). */
    void slabChanged(long[] event) {
        slabEvents.add(event);
    }

    private long[][] drainSlabEvents() {
        java.util.List<long[]> out = new java.util.ArrayList<>();
        for (long[] e; out.size() < ReplicationLayout.MAX_EVENTS && (e = slabEvents.poll()) != null; ) {
            out.add(e);
        }
        return out.toArray(new long[0][]);
    }

    private void copy(FabricConnection c) {
        long[] table;
        Checkpoint[] c0 = new Checkpoint[logs.length];
        // T0 and C0 together, with no grant or return between them: a slab granted later is written only by
        // batches after C0 (which the mirror replays after repeating the grant), one granted before is in T0
        synchronized (slabs) {
            table = slabs.ownerWords();
            slabEvents.clear();
            for (int f = 0; f < logs.length; f++) {
                c0[f] = logs[f].checkpoint();
                shipped[f] = c0[f].redoHead();
                mirrorApplied[f] = 0; // the mirror's checkpoints are its old ones until it adopts C0 at COPY_DONE
            }
        }
        long[] base = new long[logs.length];
        for (int f = 0; f < logs.length; f++) {
            base[f] = c0[f].redoHead();
        }
        copyBase = base;
        if (async != null) {
            long[] semHeads = new long[logs.length];
            for (int f = 0; f < logs.length; f++) {
                semHeads[f] = c0[f].semHead();
            }
            async.startAt(semHeads);
        }
        long heap = sb.slabCount() * sb.slabSize();
        for (long off = 0; off < heap; off += chunk) {
            requireRunning("the image copy stopped at heap offset " + off + " of " + heap);
            int n = (int) Math.min(chunk, heap - off);
            byte[] b = region.read(sb.heapOffset() + off, n);
            c.write(RegionIds.HEAP, off, b, 0, n);
            bytes.addAndGet(n);
            if ((off / chunk) % 16 == 15) {
                shipOnce(c, false); // stream what accumulated meanwhile, so the ring is read before it is reused
            }
        }
        shipOnce(c, false);
        c.flush(0, false).await();
        requireRunning("the image copy of " + heap + " heap bytes ended");
        reportFrontends(c, true); // before COPY_DONE: the mirror is never in sync without knowing them
        long[][] entries = new long[logs.length][];
        for (int f = 0; f < logs.length; f++) {
            // the target the mirror must apply before it is in sync covers every batch whose heap stores the copy
            // may have read, read after the copy's last heap read: the replayer stores a batch into the heap
            // before its checkpoint, and the checkpoint read alone missed such a batch, so a mirror declared
            // itself in sync with that batch's bytes in its heap and no redo for them; promoted after the loss of
            // the backend, it re-executed the batch's transactions over them (MirrorCopyAheadOfCheckpointTest)
            entries[f] = new long[] {c0[f].appliedTxId(), c0[f].redoHead(), c0[f].semHead(),
                    logs[f].heapStoredTxId()};
        }
        mirrorState = stateOf(c.call(ReplicationLayout.Replicate.copyDone(entries, table).encode()).await().bytes());
        for (int f = 0; f < logs.length; f++) {
            mirrorApplied[f] = c0[f].appliedTxId(); // adopted by COPY_DONE; its replay goes on from there
        }
        copyBase = null;
        sendShipped(c, shipped.clone(), drainSlabEvents()); // what was streamed during the copy may now be applied
        copies.incrementAndGet();
        LOG.info("mirror {}: image copy of {} heap bytes complete, streaming redo", name, heap);
    }

    /**
     * Refuses to go on once {@link #close} was called. The copy must never end with COPY_DONE after a close: the
     * loop used to stop copying at {@code running == false} and still send COPY_DONE, so a shipper closed while it
     * copied (its backend closed or lost, the mirror removed) told the mirror its copy was complete with part of
     * the heap (or none of it) written, and the mirror declared itself in sync on that heap. Found by
     * MirrorPowerFailureTest#lateJoinOfAMirrorTheFrontendAlreadyUses: the backend's power cut while the copy
     * began, the rig closed the backend, the mirror was promoted with a zero root word.
     */
    private void requireRunning(String where) {
        if (!running) {
            throw new AsymNvmException(ErrorCode.CONNECTION_LOST, "shipping to mirror " + name + " was stopped: "
                    + where + "; COPY_DONE not sent, the mirror stays catching up");
        }
    }

    /**
     * REPLICATE FRONTENDS: tells the mirror which frontends are attached here and under which attach epoch (it
     * is in sync only once each of them declared it SYNC, see MirrorReplayGate); sent when {@code always} or
     * when an epoch changed since the last report.
     */
    private void reportFrontends(FabricConnection c, boolean always) {
        reportingSession = sessions; // before the posting epochs are read: see awaitReported
        long[] epochs = new long[logs.length];
        for (int f = 0; f < logs.length; f++) {
            // an ASYNC mirror is shipped the semantic records by this backend: no frontend posts to it or declares
            // it, so none is reported as one whose declaration it must wait for
            epochs[f] = async != null ? 0 : node.postingEpoch(f, awaitedEpoch(f));
        }
        if (always || !Arrays.equals(epochs, reportedEpochs)) {
            mirrorState = stateOf(c.call(ReplicationLayout.frontends(epochs)).await().bytes());
            reportedEpochs = epochs;
        }
    }

    // --- a frontend gone for good holds the mirror back for a bounded time (see FrontendPresence) ---
    /** Per frontend, the attach epoch under which it was last waived (no longer waited for), 0 if none. */
    private final long[] waivedEpoch;
    /** Per frontend, the attach epoch under which it was last logged as holding the mirror back, 0 if none. */
    private final long[] heldEpoch; // read by heldBackFrontends (status, tests): a stale read only delays a report
    /** Per frontend, the attach epoch under which it was last logged as detached with commits the mirror lacks. */
    private final long[] detachedHeldEpoch; // read by detachedAwaitedFrontends (status, tests), as heldEpoch

    /**
     * The attach epoch the mirror must have frontend {@code f}'s declaration under (0: none). A frontend that
     * detached (cleanly: it shipped its redo and this backend applied every commit of it before the DETACH) is
     * waited for under its last attach epoch until the mirror applied as far as this backend: its commits since the
     * copy began reach the mirror as redo only (all of them if it never declared the mirror, those up to its declared
     * R if it did), and a mirror in sync before they are shipped and applied loses them with this backend. A frontend
     * that declared the mirror under that epoch is counted by its declaration meanwhile, as while it was attached. A
     * frontend without a session for the backend's {@code frontendGoneMillis} whose commits are all applied here and
     * on the mirror is waived (0, as if it had detached); one whose durable semantic records are not all applied here
     * (they exist on this backend only until it recovers) keeps the mirror catching up, logged once per attach epoch.
     */
    private long awaitedEpoch(int f) {
        long epoch = logs[f].attachedEpoch();
        if (epoch == 0) {
            return detachedEpoch(f);
        }
        FrontendPresence presence = node.presence();
        if (!presence.goneLong(f)) {
            return epoch;
        }
        Checkpoint cp = logs[f].checkpoint();
        long durable = ControlBlockLayout.durableSemTail(logs[f].controlBlock());
        if (appliedEverywhere(f, cp, durable)) {
            if (waivedEpoch[f] != epoch) {
                waivedEpoch[f] = epoch;
                LOG.warn("mirror {}: frontend {} (attach epoch {}) has had no session for {} ms (bound {} ms) and "
                        + "every commit of it is applied here and on the mirror (tx {}): the mirror no longer waits "
                        + "for its declaration", name, f, epoch, presence.millisGone(f), presence.goneMillis(),
                        cp.appliedTxId());
            }
            return 0;
        }
        if (heldEpoch[f] != epoch) {
            heldEpoch[f] = epoch;
            LOG.warn("mirror {}: frontend {} (attach epoch {}) has had no session for {} ms (bound {} ms) but holds "
                    + "semantic records up to ring position {} not applied (applied tx {} up to position {}; the "
                    + "mirror applied tx {}): they exist on this backend only until the frontend recovers, so the "
                    + "mirror stays catching up", name, f, epoch, presence.millisGone(f), presence.goneMillis(),
                    durable, cp.appliedTxId(), cp.semHead(), mirrorApplied[f]);
        }
        return epoch;
    }

    /**
     * A frontend not attached here: 0 if it never attached or every commit of it is applied here and on the mirror,
     * else its last attach epoch (see {@link #awaitedEpoch}).
     */
    private long detachedEpoch(int f) {
        long epoch = logs[f].currentEpoch();
        if (epoch == 0) {
            return 0;
        }
        Checkpoint cp = logs[f].checkpoint();
        long durable = ControlBlockLayout.durableSemTail(logs[f].controlBlock());
        if (appliedEverywhere(f, cp, durable)) {
            return 0;
        }
        if (detachedHeldEpoch[f] != epoch) {
            detachedHeldEpoch[f] = epoch;
            LOG.info("mirror {}: frontend {} detached (attach epoch {}) with commits up to tx {} (semantic position "
                    + "{}, applied here up to {}) that the mirror has not applied (tx {}): it waits until it has",
                    name, f, epoch, cp.appliedTxId(), durable, cp.semHead(), mirrorApplied[f]);
        }
        return epoch;
    }

    /**
     * Whether every durable commit of frontend {@code f} is applied here ({@code durable} at or before the head of
     * {@code cp}, its checkpoint here) and on the mirror, as last read after the copy (never during it).
     */
    private boolean appliedEverywhere(int f, Checkpoint cp, long durable) {
        return copyBase == null && durable <= cp.semHead() && mirrorApplied[f] >= cp.appliedTxId();
    }

    /** Frontends the mirror no longer waits for (gone longer than the bound, everything applied), as last reported. */
    public java.util.List<Integer> waivedFrontends() {
        long[] reported = reportedEpochs;
        java.util.List<Integer> out = new java.util.ArrayList<>();
        for (int f = 0; reported != null && f < logs.length; f++) {
            if (async == null && reported[f] == 0 && logs[f].attachedEpoch() != 0) {
                out.add(f);
            }
        }
        return out;
    }

    /**
     * Frontends gone longer than the bound whose unapplied semantic records keep the mirror catching up (logged),
     * as last evaluated.
     */
    public java.util.List<Integer> heldBackFrontends() {
        long[] reported = reportedEpochs;
        java.util.List<Integer> out = new java.util.ArrayList<>();
        for (int f = 0; reported != null && f < logs.length; f++) {
            if (async == null && reported[f] != 0 && PostingEpoch.attachEpoch(reported[f]) == heldEpoch[f]) {
                out.add(f);
            }
        }
        return out;
    }

    /**
     * Frontends that detached from this backend with commits the mirror has not applied yet, which it waits for
     * (see {@link #detachedEpoch}), as last reported: while one is listed, the mirror cannot turn in sync.
     */
    public java.util.List<Integer> detachedAwaitedFrontends() {
        long[] reported = reportedEpochs;
        java.util.List<Integer> out = new java.util.ArrayList<>();
        for (int f = 0; reported != null && f < logs.length; f++) {
            if (async == null && reported[f] != 0 && logs[f].attachedEpoch() == 0
                    && PostingEpoch.attachEpoch(reported[f]) == detachedHeldEpoch[f]) {
                out.add(f);
            }
        }
        return out;
    }

    /**
     * Waits until the mirror was told frontend {@code f}'s posting epoch {@code postingEpoch} (a REPLICATE FRONTENDS
     * it answered, see {@link MirrorReplayGate#frontends}), or until that no longer matters: this shipper is not in
     * a session (the next one begins with a PEER_ATTACH, which pauses the mirror, and reports the epoch before
     * COPY_DONE) or stopped shipping. Returns false if neither happened within {@code timeoutNanos}.
     */
    boolean awaitReported(int f, long postingEpoch, long timeoutNanos) {
        if (async != null) {
            return true; // an ASYNC mirror is shipped the semantic records by this backend: no declaration counts
        }
        long session = sessions;
        long deadline = System.nanoTime() + timeoutNanos;
        while (true) {
            Phase p = phase;
            long[] reported = reportedEpochs;
            // a session that has not begun a report yet reads the raised epoch in its first one, before COPY_DONE
            // (the caller stored it before this call; the report begins by writing reportingSession, then reads)
            if (!running || (p != Phase.COPYING && p != Phase.STREAMING) || sessions != session
                    || p == Phase.COPYING && reportingSession != session
                    || reported != null && PostingEpoch.covers(reported[f], postingEpoch)) {
                return true;
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            LockSupport.parkNanos(IDLE_PARK_NANOS / 10);
        }
    }

    private static int stateOf(byte[] reply) {
        return ReplicationLayout.wrap(reply).getInt(0);
    }

    /**
     * One pass: ships each frontend's redo up to the backend's checkpoint (as far as the mirror's ring allows);
     * with {@code confirm}, flushes and confirms it with REPLICATE SHIPPED. Returns whether anything was shipped.
     */
    private boolean shipOnce(FabricConnection c, boolean confirm) {
        long[][] events = confirm ? drainSlabEvents() : null; // before the checkpoints: returns lie behind them
        long[] limits = new long[logs.length];
        boolean any = false;
        for (int f = 0; f < logs.length; f++) {
            long target = logs[f].checkpoint().redoHead();
            if (target > shipped[f]) {
                long reached = shipRing(c, f, shipped[f], target);
                any |= reached > shipped[f];
                shipped[f] = reached;
            }
            limits[f] = shipped[f];
        }
        if (confirm && (any || events.length > 0)) {
            sendShipped(c, limits, events);
            return true;
        }
        return any;
    }

    private void sendShipped(FabricConnection c, long[] limits, long[][] events) {
        c.flush(0, false).await();
        mirrorState = stateOf(c.call(ReplicationLayout.Replicate.shipped(limits, events).encode()).await().bytes());
        lastShipNanos = System.nanoTime();
    }

    /** Writes frontend {@code f}'s redo entries in [from, to) to the mirror; returns the position reached. */
    private long shipRing(FabricConnection c, int f, long from, long to) {
        RingReader reader = logs[f].redoReader();
        long capacity = reader.capacity();
        byte[] block = c.read(RegionIds.control(f), 0, ControlBlockLayout.READ_LENGTH).await().bytes();
        Checkpoint mirrorCp = ControlBlockLayout.publishedCheckpoint(block);
        long[] base = copyBase;
        if (base == null) { // while copying, the mirror's checkpoint is the one it had before this copy
            mirrorApplied[f] = mirrorCp.appliedTxId();
        }
        // never write position q unless q - capacity < the mirror's redo head (while copying: the copy's C0 head,
        // which the mirror adopts; nothing before it is replayed there)
        long allowed = (base != null ? base[f] : mirrorCp.redoHead()) + capacity;
        return copyRing(c, f, reader, RegionIds.redo(f), from, to, allowed, "redo", batches);
    }

    /**
     * Writes the entries of {@code reader}'s ring in [from, to) to the mirror's region {@code regionId} at the same
     * positions, none ending past {@code allowed}; returns the position reached. Counts valid entries in
     * {@code counted}.
     */
    private long copyRing(FabricConnection c, int f, RingReader reader, int regionId, long from, long to,
                          long allowed, String what, AtomicLong counted) {
        ByteArrayOutputStream run = new ByteArrayOutputStream();
        long runStart = from;
        long pos = from;
        while (pos < to) {
            RingReader.Entry e = reader.read(pos);
            byte[] bytesAt;
            if (e.kind() == RingReader.Kind.VALID) {
                bytesAt = e.bytes();
            } else if (e.kind() == RingReader.Kind.PADDING) {
                bytesAt = paddingBytes(reader, pos, what);
            } else {
                throw new OutOfSync("mirror " + name + " fell behind: frontend " + f + "'s " + what + " at position " + pos
                        + " is no longer in this backend's ring (" + e.reason() + ": expected " + e.expected()
                        + ", actual " + e.actual() + "); it needs a new image copy");
            }
            if (e.next() > allowed) {
                break; // the mirror has not applied far enough to free this ring space: ship it next time
            }
            if (run.size() + (e.next() - pos) > chunk) {
                writeRun(c, reader, regionId, runStart, run.toByteArray());
                run.reset();
                runStart = pos;
            }
            run.write(bytesAt, 0, bytesAt.length);
            if (e.kind() == RingReader.Kind.VALID) {
                int pad = (int) (e.next() - pos) - bytesAt.length;
                run.write(new byte[pad], 0, pad); // alignment gap up to the next record
                counted.incrementAndGet();
            }
            pos = e.next();
            if (e.kind() == RingReader.Kind.PADDING) {
                writeRun(c, reader, regionId, runStart, run.toByteArray()); // the next entry starts a new lap at 0
                run.reset();
                runStart = pos;
            }
        }
        if (run.size() > 0) {
            writeRun(c, reader, regionId, runStart, run.toByteArray());
        }
        return pos;
    }

    /** A padding record's header, read twice around a validating read so a concurrent overwrite is noticed. */
    private byte[] paddingBytes(RingReader reader, long pos, String what) {
        byte[] before = region.read(reader.offsetOf(pos), LogRecordLayout.ALIGNMENT);
        RingReader.Entry again = reader.read(pos);
        byte[] after = region.read(reader.offsetOf(pos), LogRecordLayout.ALIGNMENT);
        if (again.kind() != RingReader.Kind.PADDING || !Arrays.equals(before, after)) {
            throw new OutOfSync("mirror " + name + " fell behind: the padding at " + what + " position " + pos
                    + " was overwritten while it was shipped");
        }
        return before;
    }

    private void writeRun(FabricConnection c, RingReader reader, int regionId, long start, byte[] run) {
        if (run.length == 0) {
            return;
        }
        long capacity = reader.capacity();
        c.write(regionId, Math.floorMod(start, capacity), run, 0, run.length);
        bytes.addAndGet(run.length);
    }

    /** Adds this mirror's counters to a status reply. */
    void describe(ObjectNode m) {
        m.put("mirror", name);
        m.put("phase", phase.name().toLowerCase());
        m.put("state", ReplicationLayout.stateName(mirrorState));
        m.put("batches_shipped", batchesShipped());
        m.put("bytes_shipped", bytesShipped());
        m.put("copies", copies.get());
        m.put("ms_since_last_ship", millisSinceLastShip());
        long maxLag = 0;
        ArrayNode lag = m.putArray("lag_tx");
        for (int f = 0; f < logs.length; f++) {
            long l = lagTransactions(f);
            maxLag = Math.max(maxLag, l);
            if (logs[f].currentEpoch() != 0) {
                lag.addObject().put("frontend", f).put("lag_tx", l);
            }
        }
        m.put("max_lag_tx", async == null ? maxLag : Math.max(maxLag, async.maxUnshippedTx()));
        m.put("problem", problem);
        ArrayNode waived = m.putArray("frontends_not_waited_for"); // gone longer than the bound, all applied
        waivedFrontends().forEach(waived::add);
        // what keeps the mirror catching up although no frontend is attached: detached or gone with commits it lacks
        ArrayNode detached = m.putArray("detached_frontends_waited_for");
        detachedAwaitedFrontends().forEach(detached::add);
        ArrayNode held = m.putArray("gone_frontends_holding_back");
        heldBackFrontends().forEach(held::add);
        if (async != null) {
            async.describe(m);
        } else {
            m.put("mode", "sync");
        }
    }

    private void closeConnection() {
        FabricConnection c = conn;
        conn = null;
        if (c != null) {
            try {
                c.close();
            } catch (RuntimeException ignored) {
                // closing a lost connection
            }
        }
    }

    @Override
    public void close() {
        running = false;
        if (phase != Phase.OUT_OF_SYNC && phase != Phase.REFUSED) {
            phase = Phase.STOPPED;
        }
        closeConnection();
        Thread t = thread;
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        fabric.close();
    }

    /** The mirror fell too far behind for the redo it needs to still be in this backend's ring. */
    private static final class OutOfSync extends RuntimeException {
        OutOfSync(String message) {
            super(message);
        }
    }
}
