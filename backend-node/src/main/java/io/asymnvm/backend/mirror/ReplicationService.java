package io.asymnvm.backend.mirror;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.asymnvm.backend.control.AttachAuthenticator;
import io.asymnvm.backend.log.FrontendLog;
import io.asymnvm.backend.replay.ReplayAgent;
import io.asymnvm.backend.replay.ReplayGate;
import io.asymnvm.backend.slab.SlabTable;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Access;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.NicSession;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.PostingEpoch;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.core.region.PersistentRegion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A node's role in replication and the control calls of it (formats in {@link ReplicationLayout}).
 *
 * <p><b>Mirror role.</b> Frontends attach as to a backend but are granted their semantic ring and control block
 * only (the control plane asks {@link #isMirror()}); slab and catalog calls are refused with {@code NOT_PRIMARY}
 * ({@link #requirePrimary}). One backend at a time is its replication peer: PEER_ATTACH proves the replication
 * secret, names the backend's image identity (refused with {@code IDENTITY_MISMATCH} if it is another image) and
 * epoch (refused with {@code STALE_EPOCH} if older than this node's), and fences the previous peer. The mirror then
 * pauses replay, clears its redo rings (nothing in them is known to be the new peer's history) and lets the peer
 * copy the heap and stream redo; REPLICATE COPY_DONE adopts the copy's checkpoints and slab table, REPLICATE
 * SHIPPED raises the redo limits up to which {@link MirrorReplayGate} lets the replayer apply. Refusals write
 * nothing: every check runs before the first write.
 *
 * <p><b>Promotion</b> ({@link #promote}): refused with {@code REPLICA_BEHIND} unless in sync, and with
 * {@code STALE_EPOCH} on a node already serving as backend. It fences and closes the peer, finishes replay of what
 * was shipped, clears the redo rings (everything shipped is applied; bytes past the limits were never confirmed)
 * and the semantic starts frontends stated ({@link FrontendLog#dropSemanticStart}), persists epoch + 1
 * ({@link SuperblockLayout#writePromotedEpoch}, one atomic store), reloads the slab table, switches the replayer
 * to the backend's ownership rule, and closes every frontend connection: frontends see {@code CONNECTION_LOST},
 * attach again and are told the new role and epoch.
 *
 * <p><b>Backend role.</b> ADD_MIRROR (proving the replication secret) starts a {@link MirrorShipper} to the mirror
 * it names and answers with this image's superblock, so a new mirror formats the same geometry and identity.
 */
public final class ReplicationService {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicationService.class);

    private final PersistentRegion region;
    private final Superblock sb;
    private final FrontendLog[] logs;
    private final SlabTable slabs;
    private final ReplayAgent replayer;
    private final MirrorReplayGate gate;
    private final AttachAuthenticator authenticator;
    private final List<MirrorShipper> shippers = new CopyOnWriteArrayList<>();
    private volatile boolean mirror;
    private volatile long epoch;
    private volatile NicSession peer;
    private boolean promoting;
    // --- ASYNC mirrors (issue 9): the backend's lag bounds; the mirror side's shipment counters ---
    private volatile AsyncLagBounds asyncLag = AsyncLagBounds.DEFAULTS;
    private final java.util.concurrent.atomic.AtomicLong shipmentsReceived = new java.util.concurrent.atomic.AtomicLong();
    private volatile long lastShipmentNanos;

    /** {@code gate} non-null: the node starts as a mirror replaying through it. */
    public ReplicationService(PersistentRegion region, Superblock sb, FrontendLog[] logs, SlabTable slabs,
                              ReplayAgent replayer, MirrorReplayGate gate, AttachAuthenticator authenticator) {
        this.region = region;
        this.sb = sb;
        this.logs = logs;
        this.slabs = slabs;
        this.replayer = replayer;
        this.gate = gate;
        this.authenticator = authenticator;
        this.presence = new FrontendPresence(logs.length);
        this.postingEpochs = new long[logs.length];
        this.mirror = gate != null;
        this.epoch = SuperblockLayout.effectiveEpoch(region, sb);
        slabs.onChange((slab, from, to) -> { // in order, under the table's monitor: every shipper sees every change
            long barrier = from >= 0 ? logs[from].checkpoint().redoHead() : 0;
            long word = to < 0 ? io.asymnvm.core.layout.SlabTableLayout.FREE
                    : io.asymnvm.core.layout.SlabTableLayout.ownerWord(to);
            for (MirrorShipper s : shippers) {
                s.slabChanged(new long[] {slab, word, barrier});
            }
        });
    }

    // --- a crashed frontend that never returns holds a joining mirror back for a bounded time (FrontendPresence) ---
    private final FrontendPresence presence;

    /** Which frontends hold a session here (the control plane records them, shippers read). */
    public FrontendPresence presence() {
        return presence;
    }

    /** The lag bounds of ASYNC mirrors shipped to from now on (the node's configuration). */
    public void asyncLag(AsyncLagBounds bounds) {
        asyncLag = java.util.Objects.requireNonNull(bounds, "bounds");
    }

    public boolean isMirror() {
        return mirror;
    }

    /** The node's epoch: the superblock's, raised by promotion or by following a newer backend. */
    public long epoch() {
        return epoch;
    }

    /** The ATTACH reply's role word. */
    public int role() {
        return mirror ? ControlMessageLayout.ROLE_MIRROR : ControlMessageLayout.ROLE_BACKEND;
    }

    /** A mirror's catching-up / in-sync state; {@link ReplicationLayout#STATE_SERVING} once serving as backend. */
    public int state() {
        return mirror ? gate.state() : ReplicationLayout.STATE_SERVING;
    }

    /** Refuses {@code what} on a mirror with {@code NOT_PRIMARY} naming role and epoch. */
    public void requirePrimary(String what) {
        if (mirror) {
            throw new AsymNvmException(ErrorCode.NOT_PRIMARY, what + " refused: this node is a mirror (epoch " + epoch
                    + ", " + ReplicationLayout.stateName(gate.state()) + "), not the backend of image "
                    + sb.identity() + "; ask the backend, or promote this mirror");
        }
    }

    // ---------------------------------------------------------------- mirror side

    /** PEER_ATTACH: a backend becomes this mirror's replication peer (see the class comment). */
    public byte[] peerAttach(NicSession session, byte[] request) {
        if (request.length != ReplicationLayout.PEER_ATTACH_LENGTH) {
            throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "PEER_ATTACH of " + request.length
                    + " bytes, expected " + ReplicationLayout.PEER_ATTACH_LENGTH);
        }
        long peerEpoch = ReplicationLayout.wrap(request).getLong(8);
        UUID identity = ReplicationLayout.identity(request);
        authenticator.verifyReplication(session, ReplicationLayout.PURPOSE_PEER_ATTACH, peerEpoch,
                ReplicationLayout.proof(request, ReplicationLayout.PEER_PROOF_OFFSET)); // before anything else
        NicSession old;
        synchronized (this) {
            if (!identity.equals(sb.identity())) {
                throw new AsymNvmException(ErrorCode.IDENTITY_MISMATCH, "peer backend of epoch " + peerEpoch
                        + " replicates PM image " + identity + " but this node holds image " + sb.identity()
                        + "; a mirror replicates only the image it was made from");
            }
            if (!mirror || promoting) {
                throw new AsymNvmException(ErrorCode.STALE_EPOCH, (peerEpoch == epoch
                        ? "two backends claim epoch " + epoch + ": " : "")
                        + "a backend of epoch " + peerEpoch + " attached as replication peer to this node, which "
                        + (promoting ? "is being promoted from epoch " : "serves as backend of image "
                        + sb.identity() + " under epoch ") + epoch + "; refused");
            }
            if (peerEpoch < epoch) {
                throw new AsymNvmException(ErrorCode.STALE_EPOCH, "peer backend has epoch " + peerEpoch
                        + " but this mirror of image " + sb.identity() + " is at epoch " + epoch
                        + ": a stale backend may not replicate here");
            }
            if (peerEpoch > epoch) {
                SuperblockLayout.writePromotedEpoch(region, peerEpoch); // following a newer backend
                LOG.info("mirror follows backend epoch {} (was {})", peerEpoch, epoch);
                epoch = peerEpoch;
            }
            old = peer;
            peer = session;
        }
        if (old != null && old != session) {
            old.disconnect("a newer replication peer attached");
        }
        replayer.betweenBatches(() -> {
            gate.pause();
            for (FrontendLog log : logs) {
                zeroRedoRing(log);
            }
        });
        session.revokeAll();
        session.grant(RegionIds.HEAP, Access.READ_WRITE);
        session.grant(RegionIds.SLAB_TABLE, Access.READ);
        for (int f = 0; f < logs.length; f++) {
            session.grant(RegionIds.redo(f), Access.READ_WRITE);
            session.grant(RegionIds.control(f), Access.READ);
            session.grant(RegionIds.semantic(f), Access.READ_WRITE); // an ASYNC mirror's records come from the peer
        }
        LOG.info("replication peer attached (session {}, epoch {}): image copy and redo stream start", session.id(),
                peerEpoch);
        return new ReplicationLayout.PeerReply(epoch, role(), gate.state(), sb.identity()).encode();
    }

    private void zeroRedoRing(FrontendLog log) {
        long at = sb.redoRingOf(log.frontendId());
        region.zero(at, sb.redoRingCapacity());
        region.persist(at, sb.redoRingCapacity());
    }

    /** REPLICATE from the attached peer: COPY_DONE or SHIPPED. Returns the mirror's state. */
    public byte[] replicate(NicSession session, byte[] request) {
        synchronized (this) {
            if (session != peer || session.isFenced() || !mirror || promoting) {
                throw new AsymNvmException(mirror && !promoting ? ErrorCode.STALE_EPOCH : ErrorCode.NOT_PRIMARY,
                        "REPLICATE on session " + session.id() + ", which is not the replication peer of this "
                                + (mirror ? "mirror" : "node (it serves as backend under epoch " + epoch + ")"));
            }
        }
        if (ReplicationLayout.replicateOp(request) == ReplicationLayout.OP_FRONTENDS) {
            try {
                gate.frontends(ReplicationLayout.decodeFrontends(request, logs.length));
            } catch (IllegalArgumentException e) {
                throw new AsymNvmException(ErrorCode.BAD_REQUEST, e.getMessage());
            }
            return stateReply();
        }
        ReplicationLayout.Replicate r;
        try {
            r = ReplicationLayout.Replicate.decode(request, logs.length, sb.slabCount());
        } catch (IllegalArgumentException e) {
            throw new AsymNvmException(ErrorCode.BAD_REQUEST, e.getMessage());
        }
        if (r.op() == ReplicationLayout.OP_COPY_DONE) {
            replayer.betweenBatches(() -> {
                slabs.adopt(r.ownerWords());
                for (int f = 0; f < logs.length; f++) {
                    long[] cp = r.copyCheckpoints()[f];
                    logs[f].fault(null);
                    replayer.rebase(f, cp[0], cp[1], cp[2]);
                }
                gate.copyDone(r.copyCheckpoints());
            });
            LOG.info("image copy complete: replaying the shipped redo from the copy's checkpoints");
        } else {
            try {
                gate.shipped(r.redoLimits(), r.events());
            } catch (IllegalArgumentException | IllegalStateException e) {
                throw new AsymNvmException(ErrorCode.BAD_REQUEST, e.getMessage());
            }
        }
        replayer.signal();
        shipmentsReceived.incrementAndGet();
        lastShipmentNanos = System.nanoTime();
        return stateReply();
    }

    private byte[] stateReply() {
        return ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(gate.state()).array();
    }

    /**
     * MIRROR_POSTING from a frontend attached to this mirror: it re-posted and FLUSHed here every retained semantic
     * record and posts every later one (see {@link MirrorReplayGate} for the rule it feeds). Returns the state.
     */
    public byte[] posting(NicSession session, byte[] request) {
        long[] p;
        try {
            p = ReplicationLayout.decodePosting(request);
        } catch (IllegalArgumentException e) {
            throw new AsymNvmException(ErrorCode.BAD_REQUEST, e.getMessage());
        }
        int f = (int) p[0];
        if (session.frontendId() != f || session.isFenced()) {
            throw new AsymNvmException(ErrorCode.NOT_ATTACHED, "MIRROR_POSTING for frontend " + f + " on session "
                    + session.id() + ", which is " + (session.frontendId() < 0 ? "not attached"
                    : "attached as frontend " + session.frontendId() + (session.isFenced() ? " (fenced)" : "")));
        }
        if (!mirror) {
            throw new AsymNvmException(ErrorCode.NOT_PRIMARY, "MIRROR_POSTING from frontend " + f + " refused: this "
                    + "node serves as backend of image " + sb.identity() + " under epoch " + epoch + ", not as mirror");
        }
        if (p[3] != ReplicationLayout.NO_SEM_START) {
            logs[f].adoptSemanticStart(p[3]);
        }
        if (p[2] != ReplicationLayout.NO_DECLARATION) {
            gate.posting(f, p[1], p[2]);
            LOG.info("frontend {} posts to this mirror from tx {} (backend attach epoch {})", f, p[2] + 1, p[1]);
        }
        return stateReply();
    }

    /** PROMOTE over the control plane: proves the replication secret, then {@link #promote}. */
    public byte[] promoteCall(NicSession session, byte[] request, Collection<NicSession> frontends) {
        if (request.length != ReplicationLayout.PROMOTE_LENGTH) {
            throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "PROMOTE of " + request.length
                    + " bytes, expected " + ReplicationLayout.PROMOTE_LENGTH);
        }
        authenticator.verifyReplication(session, ReplicationLayout.PURPOSE_PROMOTE, 0,
                ReplicationLayout.proof(request, ReplicationLayout.PROOF_OFFSET));
        long e = promote(frontends);
        return ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(e).array();
    }

    /** Promotes this mirror to backend (see the class comment); returns the new epoch once it serves. */
    public long promote(Collection<NicSession> frontends) {
        NicSession oldPeer;
        synchronized (this) {
            if (!mirror || promoting) {
                throw new AsymNvmException(ErrorCode.STALE_EPOCH, "promotion refused: this node already "
                        + (promoting ? "is being promoted" : "serves as backend of image " + sb.identity()
                        + " under epoch " + epoch) + "; a second promotion would claim another epoch");
            }
            requireInSync();
            promoting = true;
            oldPeer = peer;
            peer = null;
        }
        long next;
        try {
            if (oldPeer != null) {
                oldPeer.disconnect("this mirror is being promoted to backend");
            }
            replayer.awaitReplayed();
            synchronized (this) {
                for (FrontendLog log : logs) {
                    long head = log.checkpoint().redoHead();
                    long shipped = gate.shippedLimit(log.frontendId());
                    if (head < shipped && log.fault() == null && log.quarantine() == null) {
                        throw new AsymNvmException(ErrorCode.REPLICA_BEHIND, "promotion refused: frontend "
                                + log.frontendId() + " is replayed up to redo position " + head + " (applied tx "
                                + log.checkpoint().appliedTxId() + ") of the " + shipped + " shipped");
                    }
                }
                next = epoch + 1;
                replayer.betweenBatches(() -> {
                    for (FrontendLog log : logs) {
                        zeroRedoRing(log); // everything shipped is applied; the rest was never confirmed
                        log.dropSemanticStart(); // a backend's ring holds every record past its head
                    }
                    SuperblockLayout.writePromotedEpoch(region, next);
                    slabs.reload();
                    replayer.gate(ReplayGate.ownership(slabs));
                });
                epoch = next;
                mirror = false;
            }
        } finally {
            synchronized (this) {
                promoting = false;
            }
        }
        for (NicSession s : frontends) {
            s.disconnect("this node was promoted to backend under epoch " + next + "; attach again");
        }
        LOG.info("promoted to backend of image {} under epoch {}", sb.identity(), next);
        return next;
    }

    private void requireInSync() {
        String why = gate.behind();
        if (why == null) {
            return;
        }
        throw new AsymNvmException(ErrorCode.REPLICA_BEHIND, "promotion refused: this mirror (epoch " + epoch
                + ") is catching up, not in sync: " + why);
    }

    // ---------------------------------------------------------------- backend side

    /** How long a POSTING_GENERATION waits for the shippers to tell their mirrors (then {@code TIMEOUT}). */
    static final long POSTING_REPORT_TIMEOUT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
    /** Per frontend, its posting epoch as it last raised it (POSTING_GENERATION), 0 if never. */
    private final long[] postingEpochs;

    /**
     * Frontend {@code f}'s posting epoch under {@code attachEpoch} (0: none): its attach epoch with the posting
     * generation it raised under that attach epoch, or generation 0 (see {@link PostingEpoch}).
     */
    long postingEpoch(int f, long attachEpoch) {
        if (attachEpoch == 0) {
            return 0;
        }
        long raised;
        synchronized (postingEpochs) {
            raised = postingEpochs[f];
        }
        return raised != 0 && PostingEpoch.attachEpoch(raised) == attachEpoch ? raised : attachEpoch;
    }

    /**
     * POSTING_GENERATION from a frontend attached here: it dropped a SYNC mirror and raises its posting generation
     * (see {@link PostingEpoch}), so that a declaration it made before no longer makes a mirror count it. Replies
     * once every SYNC mirror shipped to was told (or will be paused by a new copy before it is shipped anything; see
     * {@link MirrorShipper#awaitReported}): only then does the frontend acknowledge commits without the mirror it
     * dropped. {@code TIMEOUT} if a shipper did not get to it in time (the frontend keeps the mirror meanwhile).
     */
    public byte[] postingGeneration(NicSession session, int f, long postingEpoch) {
        if (session.frontendId() != f || session.isFenced() || f < 0 || f >= logs.length) {
            throw new AsymNvmException(ErrorCode.NOT_ATTACHED, "POSTING_GENERATION for frontend " + f + " on session "
                    + session.id() + ", which is " + (session.frontendId() < 0 ? "not attached"
                    : "attached as frontend " + session.frontendId() + (session.isFenced() ? " (fenced)" : "")));
        }
        requirePrimary("POSTING_GENERATION");
        long attach = PostingEpoch.attachEpoch(postingEpoch);
        if (attach != session.attachEpoch() || attach != logs[f].attachedEpoch()) {
            throw new AsymNvmException(ErrorCode.BAD_REQUEST, "POSTING_GENERATION of frontend " + f + " names "
                    + PostingEpoch.describe(postingEpoch) + " but its session is attached under attach epoch "
                    + session.attachEpoch());
        }
        synchronized (postingEpochs) {
            long now = postingEpochs[f];
            if (now == 0 || PostingEpoch.attachEpoch(now) != attach
                    || PostingEpoch.generation(now) < PostingEpoch.generation(postingEpoch)) {
                postingEpochs[f] = postingEpoch;
            }
        }
        for (MirrorShipper s : shippers) {
            if (!s.awaitReported(f, postingEpoch, POSTING_REPORT_TIMEOUT_NANOS)) {
                throw new AsymNvmException(ErrorCode.TIMEOUT, "frontend " + f + " raised its posting generation to "
                        + PostingEpoch.describe(postingEpoch) + " but the shipper to mirror " + s.name() + " did not "
                        + "tell the mirror within " + java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(
                        POSTING_REPORT_TIMEOUT_NANOS) + " ms (phase " + s.phase() + ")");
            }
        }
        LOG.info("frontend {} dropped a SYNC mirror: {}; every mirror shipped to was told", f,
                PostingEpoch.describe(postingEpoch));
        return new byte[0];
    }

    /** ADD_MIRROR: answers with the superblock and, when asked, starts shipping to the mirror it names. */
    public byte[] addMirrorCall(NicSession session, byte[] request) {
        if (request.length < ReplicationLayout.ADD_HOST_OFFSET) {
            throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "ADD_MIRROR of " + request.length
                    + " bytes, at least " + ReplicationLayout.ADD_HOST_OFFSET);
        }
        long flags = ReplicationLayout.wrap(request).getLong(8);
        authenticator.verifyReplication(session, ReplicationLayout.PURPOSE_ADD_MIRROR, flags,
                ReplicationLayout.proof(request, ReplicationLayout.PROOF_OFFSET));
        requirePrimary("ADD_MIRROR");
        if ((flags & ReplicationLayout.ADD_SHIP) != 0) {
            ReplicationLayout.MirrorAddress a;
            try {
                a = ReplicationLayout.addMirrorAddress(request);
            } catch (IllegalArgumentException e) {
                throw new AsymNvmException(ErrorCode.BAD_REQUEST, e.getMessage());
            }
            String name = a.host() + ":" + a.port();
            for (MirrorShipper s : shippers) {
                if (s.name().equals(name)) {
                    s.close();
                    shippers.remove(s);
                }
            }
            addMirror(name, new io.asymnvm.core.fabric.tcp.TcpFabric(a.host(), a.port()),
                    (flags & ReplicationLayout.ADD_ASYNC) != 0);
        }
        return SuperblockLayout.encode(SuperblockLayout.withEpoch(sb, epoch));
    }

    /** Starts shipping to the mirror reached through {@code fabric} (closed with the shipper). */
    public MirrorShipper addMirror(String name, Fabric fabric) {
        return addMirror(name, fabric, false);
    }

    /**
     * Starts shipping to the mirror reached through {@code fabric}; {@code async}: an ASYNC mirror, also shipped the
     * frontends' durable semantic records, within this node's {@link AsyncLagBounds} ({@link AsyncShipping}).
     */
    public MirrorShipper addMirror(String name, Fabric fabric, boolean async) {
        requirePrimary("adding a mirror");
        MirrorShipper s = new MirrorShipper(name, fabric, region, sb, logs, slabs, this,
                authenticator.replicationSecret(), async ? new AsyncShipping(name, logs, asyncLag) : null);
        shippers.add(s);
        s.start();
        return s;
    }

    public List<MirrorShipper> shippers() {
        return List.copyOf(shippers);
    }

    /** Stops shipping to the mirror named {@code name} (dropped from the cluster); false if there was none. */
    public boolean removeMirror(String name) {
        boolean removed = false;
        for (MirrorShipper s : shippers) {
            if (s.name().equals(name)) {
                s.close();
                removed |= shippers.remove(s);
            }
        }
        return removed;
    }

    /** Stops every shipper (the node closes). */
    public void close() {
        for (MirrorShipper s : shippers) {
            s.close();
        }
        shippers.clear();
    }

    /** Adds role, epoch, state and the mirrors' counters to a status reply. */
    public void describe(ObjectNode root) {
        root.put("role", mirror ? "mirror" : "backend");
        root.put("epoch", epoch);
        root.put("state", ReplicationLayout.stateName(state()));
        if (mirror) { // the mirror side of the lag: shipments received from the backend (ASYNC mirrors, issue 9)
            long last = lastShipmentNanos;
            root.put("shipments_received", shipmentsReceived.get());
            root.put("ms_since_last_shipment", last == 0 ? -1
                    : java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - last));
            ArrayNode applied = root.putArray("applied_tx");
            for (FrontendLog log : logs) {
                if (log.checkpoint().appliedTxId() != 0) {
                    applied.addObject().put("frontend", log.frontendId()).put("applied_tx",
                            log.checkpoint().appliedTxId());
                }
            }
        }
        ArrayNode mirrors = root.putArray("mirrors");
        for (MirrorShipper s : shippers) {
            s.describe(mirrors.addObject());
        }
    }
}
