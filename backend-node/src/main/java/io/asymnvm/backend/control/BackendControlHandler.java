package io.asymnvm.backend.control;

import io.asymnvm.backend.catalog.CatalogIndex;
import io.asymnvm.backend.log.FrontendLog;
import io.asymnvm.backend.mirror.ReplicationService;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.backend.slab.SlabTable;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Access;
import io.asymnvm.core.fabric.ControlHandler;
import io.asymnvm.core.fabric.NicSession;
import io.asymnvm.core.fabric.RemotePersistenceRecipe;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.ControlBlockLayout.Checkpoint;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.RootDirectoryLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.recovery.log.RingScanner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The backend's control plane (two-sided calls): attach, slab grants, detach. Attach grants the session its
 * regions (heap read-only, own control block read-only, own rings read-write), points its FLUSH stamp at the
 * durable watermark word, and fences any older session of the same frontend, so a stale frontend can never
 * write again once a new incarnation attached. A session from another process must first pass
 * {@link AttachAuthenticator} (challenge, then an ATTACH carrying its proof), which runs before anything else.
 */
public final class BackendControlHandler implements ControlHandler {
    private static final Logger LOG = LoggerFactory.getLogger(BackendControlHandler.class);

    private final Superblock sb;
    private final FrontendLog[] logs;
    private final SlabTable slabs;
    private final RemotePersistenceRecipe recipe;
    private final Map<Integer, NicSession> sessions = new ConcurrentHashMap<>();
    private final Runnable awaitReplayed;
    private final CatalogIndex catalog;
    private final AttachAuthenticator authenticator;

    /**
     * {@code awaitReplayed} finishes replay of every complete redo batch; attach runs it after fencing the old
     * session, so the checkpoint it reports is final for everything the previous incarnation shipped.
     */
    public BackendControlHandler(Superblock sb, FrontendLog[] logs, SlabTable slabs, RemotePersistenceRecipe recipe,
                                 Runnable awaitReplayed, CatalogIndex catalog) {
        this(sb, logs, slabs, recipe, awaitReplayed, catalog, AttachAuthenticator.insecure());
    }

    /** As above, with {@code authenticator} checking every ATTACH from another process before anything else. */
    public BackendControlHandler(Superblock sb, FrontendLog[] logs, SlabTable slabs, RemotePersistenceRecipe recipe,
                                 Runnable awaitReplayed, CatalogIndex catalog, AttachAuthenticator authenticator) {
        this(sb, logs, slabs, recipe, awaitReplayed, catalog, authenticator, null);
    }

    // ---- mirrors (issue 9): the node's role decides grants and refusals; null = a backend without replication ----
    private final ReplicationService replication;

    /** As above, with {@code replication} deciding the node's role (backend or mirror) and serving kinds 10-13. */
    public BackendControlHandler(Superblock sb, FrontendLog[] logs, SlabTable slabs, RemotePersistenceRecipe recipe,
                                 Runnable awaitReplayed, CatalogIndex catalog, AttachAuthenticator authenticator,
                                 ReplicationService replication) {
        this.replication = replication;
        this.authenticator = authenticator;
        this.sb = sb;
        this.logs = logs;
        this.slabs = slabs;
        this.recipe = recipe;
        this.awaitReplayed = awaitReplayed;
        this.catalog = catalog;
    }

    @Override
    public byte[] handle(NicSession session, byte[] request) {
        if (request.length < ControlMessageLayout.REQUEST_LENGTH) {
            throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "control request of " + request.length
                    + " bytes, expected " + ControlMessageLayout.REQUEST_LENGTH);
        }
        ByteBuffer b = ControlMessageLayout.wrap(request);
        int kind = b.getInt();
        int frontendId = b.getInt();
        authenticator.checkControl(session, kind);
        return switch (kind) {
            case ControlMessageLayout.KIND_CHALLENGE -> authenticator.challenge(session);
            case ControlMessageLayout.KIND_ATTACH -> {
                long expectedEpoch = b.getLong();
                authenticator.verifyAttach(session, frontendId, expectedEpoch,
                        ControlMessageLayout.attachProof(request)); // before anything is fenced or granted
                java.util.UUID expected = ControlMessageLayout.attachIdentity(request);
                if (expected != null) {
                    if (!expected.equals(sb.identity())) {
                        throw new AsymNvmException(ErrorCode.IDENTITY_MISMATCH, "frontend " + frontendId
                                + " was attached to PM image " + expected + " but this backend serves image "
                                + sb.identity() + "; refusing to resume on another image");
                    }
                }
                yield attach(session, frontendId, expectedEpoch);
            }
            case ControlMessageLayout.KIND_GRANT_SLAB -> {
                requirePrimary("slab grant");
                yield grant(session);
            }
            case ControlMessageLayout.KIND_RETURN_SLAB -> {
                requirePrimary("slab return");
                yield returnSlab(session, b.getLong());
            }
            case ControlMessageLayout.KIND_DETACH -> detach(session);
            case ControlMessageLayout.KIND_PING -> new byte[0];
            case ControlMessageLayout.KIND_STATUS ->
                    BackendStatus.encode(sb, logs, sessions, replication); // no attach needed
            case ControlMessageLayout.KIND_CATALOG_LOOKUP, ControlMessageLayout.KIND_CATALOG_BIND -> {
                requirePrimary("catalog call");
                yield catalog(session, kind, b);
            }
            case ControlMessageLayout.KIND_PEER_ATTACH -> replication().peerAttach(session, request);
            case ReplicationLayout.KIND_REPLICATE -> replication().replicate(session, request);
            case ControlMessageLayout.KIND_PROMOTE -> replication().promoteCall(session, request,
                    java.util.List.copyOf(sessions.values()));
            case ReplicationLayout.KIND_ADD_MIRROR -> replication().addMirrorCall(session, request);
            case ReplicationLayout.KIND_MIRROR_POSTING -> replication().posting(session, request);
            case ControlMessageLayout.KIND_POSTING_GENERATION -> replication == null
                    ? new byte[0] // ships to no mirror: no declaration here to void
                    : replication.postingGeneration(session, frontendId, b.getLong());
            default -> throw new AsymNvmException(ErrorCode.BAD_REQUEST, "unknown control message kind " + kind);
        };
    }

    private void requirePrimary(String what) {
        if (replication != null) {
            replication.requirePrimary(what);
        }
    }

    private ReplicationService replication() {
        if (replication == null) {
            throw new AsymNvmException(ErrorCode.BAD_REQUEST, "this node does not replicate (no replication service)");
        }
        return replication;
    }

    /** Promotes this mirror (see {@link ReplicationService#promote}), closing every frontend connection. */
    public long promote() {
        return replication().promote(java.util.List.copyOf(sessions.values()));
    }

    /**
     * {@code expectedEpoch} is 0 for a new incarnation; a reconnecting one passes the epoch it held, and is
     * refused (without fencing anyone) if another incarnation attached since.
     */
    private byte[] attach(NicSession session, int frontendId, long expectedEpoch) {
        if (frontendId < 0 || frontendId >= logs.length) {
            throw new AsymNvmException(ErrorCode.UNKNOWN_FRONTEND, "frontend id " + frontendId
                    + " outside [0, " + logs.length + ") of this backend");
        }
        if (session.isFenced()) {
            // re-attaching would fence the newer incarnation while this session stays fenced: refuse the stale one
            throw new AsymNvmException(ErrorCode.STALE_EPOCH, "session " + session.id() + " of frontend "
                    + session.frontendId() + " was fenced by a newer attach; connect again to attach");
        }
        FrontendLog log = logs[frontendId];
        if (log.fault() != null) {
            throw new AsymNvmException(ErrorCode.RECOVERY_REQUIRED, "replay of frontend " + frontendId
                    + " is stopped: " + log.fault());
        }
        log.requireNotQuarantined(); // RING_CORRUPT: a damaged ring quarantines this frontend only
        synchronized (log) {
            if (expectedEpoch != 0 && log.currentEpoch() != expectedEpoch) {
                throw new AsymNvmException(ErrorCode.STALE_EPOCH, "frontend " + frontendId + " re-attaching from "
                        + "epoch " + expectedEpoch + " but the epoch is now " + log.currentEpoch()
                        + ": another incarnation attached meanwhile");
            }
            long epoch = log.beginAttach();
            if (session.frontendId() >= 0 && session.frontendId() != frontendId) {
                sessions.remove(session.frontendId(), session); // moved to another id: no longer that frontend's
            }
            NicSession old = sessions.put(frontendId, session);
            if (replication != null) {
                replication.presence().attached(frontendId);
            }
            if (old != null && old != session) {
                old.fence("frontend " + frontendId + " re-attached with epoch " + epoch);
                LOG.info("fenced older session {} of frontend {}", old.id(), frontendId);
            }
            session.revokeAll();
            session.bind(frontendId, epoch);
            boolean mirror = replication != null && replication.isMirror();
            if (!mirror) { // a mirror grants the semantic ring and control block only (no heap, no redo)
                session.grant(RegionIds.HEAP, Access.READ);
                session.grant(RegionIds.redo(frontendId), Access.READ_WRITE);
            }
            session.grant(RegionIds.control(frontendId), Access.READ);
            session.grant(RegionIds.semantic(frontendId), Access.READ_WRITE);
            session.stampAt(RegionIds.control(frontendId), ControlBlockLayout.DURABLE_SEM_TAIL_OFFSET,
                    log::admitWatermark);
            awaitReplayed.run();
            if (log.fault() != null || log.quarantine() != null) {
                session.revokeAll(); // a refused attach leaves the session no access to the frontend's regions
                log.requireNotQuarantined();
                throw new AsymNvmException(ErrorCode.RECOVERY_REQUIRED, "replay of frontend " + frontendId
                        + " is stopped: " + log.fault());
            }
            Checkpoint cp = log.checkpoint();
            FrontendLog.SemanticTail sem;
            try {
                sem = log.scanSemantic(); // a damaged record quarantines the frontend: RING_CORRUPT
            } catch (AsymNvmException e) {
                session.revokeAll();
                throw e;
            }
            RingScanner.Scan redo = RingScanner.scan(log.redoReader(), cp.redoHead(), cp.redoHead(), null);
            // the session writes from the tails on: no crashed session's record there may validate first (a
            // mirror's redo ring is its shipper's, and no frontend attaches to an ASYNC mirror)
            if (mirror) {
                log.invalidateStaleSemanticRecords(sem.tail());
            } else {
                log.invalidateStaleRecords(sem.tail(), redo.tail());
            }
            LOG.info("frontend {} attached (epoch {}): applied tx {}, {} semantic records after it",
                    frontendId, epoch, cp.appliedTxId(), sem.records());
            return new AttachReply(replication == null ? sb.epoch() : replication.epoch(), epoch, sb.pageSize(),
                    recipe.wireValue(), sb.semRingCapacity(),
                    sb.redoRingCapacity(), sb.slabSize(), sb.slabCount() * sb.slabSize(), cp.appliedTxId(),
                    cp.semHead(), cp.redoHead(), sem.tail(), redo.tail(), sem.lastTxId(),
                    sb.identity(), slabs.ownedBy(frontendId),
                    mirror ? ControlMessageLayout.ROLE_MIRROR : ControlMessageLayout.ROLE_BACKEND).encode();
        }
    }

    private int requireAttached(NicSession session) {
        if (session.frontendId() < 0) {
            throw new AsymNvmException(ErrorCode.NOT_ATTACHED, "session " + session.id() + " has not attached");
        }
        if (session.isFenced()) {
            throw new AsymNvmException(ErrorCode.STALE_EPOCH, "session " + session.id() + " of frontend "
                    + session.frontendId() + " was fenced by a newer attach");
        }
        return session.frontendId();
    }

    private byte[] grant(NicSession session) {
        int frontendId = requireAttached(session);
        long slab = slabs.grant(frontendId);
        return ByteBuffer.allocate(16).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .putLong(slab).putLong(slab * sb.slabSize()).array();
    }

    /** Persisted in the slab table before the reply (see {@link SlabTable#release}). */
    private byte[] returnSlab(NicSession session, long slab) {
        int frontendId = requireAttached(session);
        slabs.release(frontendId, slab);
        LOG.debug("frontend {} returned slab {}", frontendId, slab);
        return new byte[0];
    }

    private byte[] catalog(NicSession session, int kind, ByteBuffer b) {
        int frontendId = requireAttached(session);
        b.position(ControlMessageLayout.REQUEST_LENGTH);
        if (b.remaining() < 4) {
            throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "catalog request without a name");
        }
        int n = b.getInt();
        if (n < 1 || n > RootDirectoryLayout.MAX_NAME_BYTES || b.remaining() < n) {
            throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "catalog name length " + n + " outside [1, "
                    + RootDirectoryLayout.MAX_NAME_BYTES + "] or past the request");
        }
        byte[] nameBytes = new byte[n];
        b.get(nameBytes);
        String name = new String(nameBytes, java.nio.charset.StandardCharsets.UTF_8);
        if (kind == ControlMessageLayout.KIND_CATALOG_LOOKUP) {
            return ControlMessageLayout.CatalogEntry.encode(catalog.lookup(name));
        }
        if (b.remaining() < 24) {
            throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "catalog bind of '" + name + "' without its entry");
        }
        RootDirectoryLayout.Entry entry = new RootDirectoryLayout.Entry(name, b.getInt(), b.getInt(), b.getInt(),
                b.getLong(b.position() + 4));
        catalog.bind(frontendId, entry);
        return ControlMessageLayout.CatalogEntry.encode(new ControlMessageLayout.CatalogEntry(frontendId, entry));
    }

    private byte[] detach(NicSession session) {
        int frontendId = requireAttached(session);
        logs[frontendId].markDetached();
        session.revokeAll();
        if (sessions.remove(frontendId, session) && replication != null) {
            replication.presence().gone(frontendId);
        }
        return new byte[0];
    }

    @Override
    public void sessionClosed(NicSession session) {
        if (session.frontendId() >= 0) {
            if (sessions.remove(session.frontendId(), session) && replication != null) {
                replication.presence().gone(session.frontendId()); // its last session: a crash looks like this
            }
        }
    }
}
