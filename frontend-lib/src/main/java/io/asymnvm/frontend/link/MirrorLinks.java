package io.asymnvm.frontend.link;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.ReplicationLayout;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A frontend's links to its SYNC mirrors (issue 9, DESIGN §6): each mirror holds a replica of the backend's image
 * with the same identity and ring geometry, and this frontend posts every semantic record to it at the same ring
 * position as to the backend ({@link #semanticWriter}) and FLUSHes it in parallel with the backend's FLUSH
 * ({@link #flush}), so a commit is acknowledged only when durable everywhere, still in one round-trip time. Redo
 * goes to the backend only (the backend ships it to the mirrors).
 *
 * <p>Each mirror's published checkpoint (applied tx, ring heads) is kept here, and ring space is released only
 * at the minimum over the backend and every mirror ({@link #minApplied} and friends): what a mirror has not
 * applied stays retained in DRAM and unoverwritten in its ring, so a promoted mirror can re-execute it.
 *
 * <p>The set of in-sync mirrors is copy-on-write: {@link #drop} removes one (an operator or the cluster layer
 * decided it is dead), after which commits no longer wait for it. Checkpoint fields are written under the
 * engine's execution lock; the set is read without locks.
 */
public final class MirrorLinks implements AutoCloseable {
    /** One SYNC mirror: its link, whether it was attached and dropped, and its last known checkpoint. */
    public static final class Mirror {
        private final BackendLink link;
        private volatile boolean attached;
        private volatile boolean dropped;
        /** Set while the frontend drops it: it is declared no more (see {@link #beginDrop}). */
        private volatile boolean dropping;
        private volatile long appliedTxId;
        private volatile long semHead;
        private volatile long redoHead;
        /** False for an ASYNC mirror (issue 9): never posted to; watched for ring release and failover only. */
        private final boolean posted;

        Mirror(BackendLink link, boolean posted) {
            this.link = link;
            this.posted = posted;
        }

        /** True for a SYNC mirror (records and FLUSHes posted to it); false for an ASYNC one. */
        public boolean posted() {
            return posted;
        }

        public BackendLink link() {
            return link;
        }

        public String endpoint() {
            return link.endpoint();
        }

        public boolean dropped() {
            return dropped;
        }

        /**
         * The frontend is about to drop this mirror (and to raise its posting generation): from now on no
         * declaration is sent to it, so none under the raised generation can keep it in sync once it is out of the
         * set. {@code false} undoes it (the drop failed; the mirror stays in the set and is posted to).
         */
        public void beginDrop(boolean dropping) {
            this.dropping = dropping;
        }

        public long appliedTxId() {
            return appliedTxId;
        }

        /** Learns the mirror's checkpoint (from an attach reply or its control block); never moves back. */
        public void learn(long applied, long sem, long redo) {
            appliedTxId = Math.max(appliedTxId, applied);
            semHead = Math.max(semHead, sem);
            redoHead = Math.max(redoHead, redo);
        }

        /** Reads the mirror's published checkpoint (one round trip); a lost connection throws. */
        public ControlBlockLayout.Checkpoint readCheckpoint() {
            byte[] block = link.read(RegionIds.control(link.frontendId()), 0, ControlBlockLayout.READ_LENGTH)
                    .await().bytes();
            return ControlBlockLayout.publishedCheckpoint(block);
        }

        private void post(int region, long offset, byte[] data, int length) {
            try {
                link.write(region, offset, data, length);
            } catch (RuntimeException notConnected) {
                // a dead or reconnecting mirror: its FLUSH fails, the commit reconnects it and re-posts the ring
            }
        }

        @Override
        public String toString() {
            return "mirror " + endpoint();
        }
    }

    /** FLUSHes posted to the mirrors for one durability wait, with the generation each was posted in. */
    public record Flush(Mirror[] mirrors, Completion[] completions, long[] generations) {
    }

    private final boolean acceptBackendRole;
    private volatile Mirror[] active;

    /**
     * Links not yet opened, one per SYNC mirror. {@code acceptBackendRole} (tests only) takes a node that answers
     * as a backend (a byte copy of the backend's image served by a second backend node) as a mirror.
     */
    public MirrorLinks(List<BackendLink> links, boolean acceptBackendRole) {
        this(links, List.of(), acceptBackendRole);
    }

    /**
     * SYNC mirrors {@code links} and ASYNC mirrors {@code asyncLinks} (issue 9). An ASYNC mirror is attached and
     * checked like a SYNC one, but never posted to (the backend ships to it): the frontend reads its checkpoint and
     * keeps ring space until it applied the records (so it still holds every record the mirror lacks), and looks
     * for it among the promoted mirrors at a failover, where every retained record is written to it again.
     */
    public MirrorLinks(List<BackendLink> links, List<BackendLink> asyncLinks, boolean acceptBackendRole) {
        this.acceptBackendRole = acceptBackendRole;
        List<String> seen = new ArrayList<>();
        Mirror[] m = new Mirror[links.size() + asyncLinks.size()];
        for (int i = 0; i < m.length; i++) {
            BackendLink link = i < links.size() ? links.get(i) : asyncLinks.get(i - links.size());
            String endpoint = link.endpoint();
            if (seen.contains(endpoint)) {
                throw new IllegalArgumentException("mirror " + endpoint + " is configured twice");
            }
            seen.add(endpoint);
            m[i] = new Mirror(link, i < links.size());
        }
        this.active = m;
    }

    private MirrorLinks(Mirror[] active, boolean acceptBackendRole) {
        this.active = active;
        this.acceptBackendRole = acceptBackendRole;
    }

    /** The in-sync mirrors now (not dropped). */
    public Mirror[] active() {
        return active;
    }

    public boolean isEmpty() {
        return active.length == 0;
    }

    /** Endpoints of the in-sync mirrors. */
    public List<String> endpoints() {
        return Arrays.stream(active).map(Mirror::endpoint).toList();
    }

    /**
     * Attaches every mirror not yet attached and checks each against the backend's attach reply: same image
     * identity and geometry, and a mirror's role (a node that answers as a backend is refused with
     * {@code STALE_EPOCH} naming both epochs: two nodes would claim to serve). On a refusal every mirror this call
     * opened is closed again.
     */
    public void open(AttachReply backend, String backendEndpoint) {
        List<Mirror> opened = new ArrayList<>();
        try {
            for (Mirror m : active) {
                if (m.attached) {
                    checkSameImage(m, m.link.endpoint(), backend, backendEndpoint, null);
                    continue;
                }
                AttachReply r = m.link.open();
                opened.add(m);
                checkSameImage(m, m.link.endpoint(), backend, backendEndpoint, r);
                m.learn(r.appliedTxId(), r.semHead(), r.redoHead());
                m.attached = true;
            }
        } catch (RuntimeException e) {
            for (Mirror m : opened) {
                m.link.close();
                m.attached = false;
            }
            throw e;
        }
    }

    private void checkSameImage(Mirror m, String endpoint, AttachReply backend, String backendEndpoint,
                                AttachReply r) {
        if (r == null) {
            return; // attached before (carried over a failover): its image was checked then
        }
        if (!r.identity().equals(backend.identity())) {
            throw new AsymNvmException(ErrorCode.IDENTITY_MISMATCH, "mirror " + endpoint + " holds PM image "
                    + r.identity() + " but backend " + backendEndpoint + " serves image " + backend.identity()
                    + ": a mirror must replicate the backend's image");
        }
        checkRole(endpoint, r, backend, backendEndpoint);
        if (r.pageSize() != backend.pageSize() || r.semCapacity() != backend.semCapacity()
                || r.redoCapacity() != backend.redoCapacity() || r.heapSize() != backend.heapSize()
                || r.slabSize() != backend.slabSize()) {
            throw new AsymNvmException(ErrorCode.IDENTITY_MISMATCH, "mirror " + endpoint + " has geometry "
                    + geometry(r) + " but backend " + backendEndpoint + " has " + geometry(backend));
        }
    }

    private void checkRole(String endpoint, AttachReply r, AttachReply backend, String backendEndpoint) {
        if (!r.isMirror() && !acceptBackendRole) {
            throw new AsymNvmException(ErrorCode.STALE_EPOCH, "mirror " + endpoint + " answers as a serving "
                    + "backend with epoch " + r.backendEpoch() + " while backend " + backendEndpoint
                    + " serves epoch " + backend.backendEpoch() + ": refusing two nodes that claim to serve");
        }
    }

    private static String geometry(AttachReply r) {
        return "[page " + r.pageSize() + ", semantic ring " + r.semCapacity() + ", redo ring " + r.redoCapacity()
                + ", heap " + r.heapSize() + ", slab " + r.slabSize() + "]";
    }

    /**
     * Whether a re-attach reply shows that {@code m} was promoted: it answers as the serving backend with an epoch
     * newer than any this frontend has seen.
     */
    public boolean promoted(AttachReply r, EpochFence fence) {
        return !r.isMirror() && r.backendEpoch() > fence.highest();
    }

    /**
     * A semantic-ring writer that posts each record to {@code backend} and to every in-sync mirror at the same
     * position with the same bytes. Returns the backend's completion.
     */
    public RingWriter semanticWriter(BackendLink backend) {
        return (region, offset, data, length) -> {
            Completion c = backend.write(region, offset, data, length);
            for (Mirror m : active) {
                if (m.posted) {
                    m.post(region, offset, data, length);
                }
            }
            return c;
        };
    }

    /** Posts a FLUSH stamped {@code stamp} to every in-sync SYNC mirror (not awaited). */
    public Flush flush(long stamp) {
        Mirror[] ms = Arrays.stream(active).filter(m -> m.posted).toArray(Mirror[]::new);
        Completion[] cs = new Completion[ms.length];
        long[] gens = new long[ms.length];
        for (int i = 0; i < ms.length; i++) {
            gens[i] = ms[i].link.generation();
            try {
                cs[i] = ms[i].link.flush(stamp);
            } catch (RuntimeException notConnected) {
                cs[i] = null; // awaited as a lost connection
            }
        }
        return new Flush(ms, cs, gens);
    }

    /** The oldest applied transaction over the backend's {@code applied} and every in-sync mirror's. */
    public long minApplied(long backendApplied) {
        long min = backendApplied;
        for (Mirror m : active) {
            min = Math.min(min, m.appliedTxId);
        }
        return min;
    }

    public long minSemHead(long backendHead) {
        long min = backendHead;
        for (Mirror m : active) {
            min = Math.min(min, m.semHead);
        }
        return min;
    }

    public long minRedoHead(long backendHead) {
        long min = backendHead;
        for (Mirror m : active) {
            min = Math.min(min, m.redoHead);
        }
        return min;
    }

    /**
     * Removes the mirror named {@code endpoint} from the in-sync set: commits stop waiting for it and ring space
     * is no longer held for it. A reconnect to it in progress is cancelled. Returns the dropped mirror.
     */
    public synchronized Mirror drop(String endpoint) {
        Mirror[] ms = active;
        for (int i = 0; i < ms.length; i++) {
            if (ms[i].endpoint().equals(endpoint)) {
                Mirror m = ms[i];
                m.dropped = true;
                Mirror[] rest = new Mirror[ms.length - 1];
                System.arraycopy(ms, 0, rest, 0, i);
                System.arraycopy(ms, i + 1, rest, i, ms.length - i - 1);
                active = rest;
                m.link.cancel();
                return m;
            }
        }
        throw new IllegalArgumentException("no in-sync mirror " + endpoint + " (in sync: " + endpoints() + ")");
    }

    /** The in-sync mirror named {@code endpoint}; refused as {@link #drop} refuses it if there is none. */
    public Mirror find(String endpoint) {
        for (Mirror m : active) {
            if (m.endpoint().equals(endpoint)) {
                return m;
            }
        }
        throw new IllegalArgumentException("no in-sync mirror " + endpoint + " (in sync: " + endpoints() + ")");
    }

    /** Whether the mirror reached through {@code link} (this very link) is in the in-sync set. */
    public boolean contains(BackendLink link) {
        for (Mirror m : active) {
            if (m.link == link) {
                return true;
            }
        }
        return false;
    }

    /**
     * Adds a SYNC mirror at run time (issue 9): {@code link} was opened with {@code reply}, which must show the
     * backend's image and geometry and a mirror's role (as at open). Called under the engine's execution lock, so
     * the caller re-posts the retained records to it before any later record is posted: from the return on, the
     * semantic writer posts every record to it too. A mirror already in the set is refused.
     */
    public synchronized Mirror add(BackendLink link, AttachReply reply, AttachReply backend, String backendEndpoint) {
        Mirror[] ms = active;
        for (Mirror m : ms) {
            if (m.endpoint().equals(link.endpoint())) {
                throw new IllegalArgumentException("mirror " + link.endpoint() + " is already a SYNC mirror of this "
                        + "frontend (in sync: " + endpoints() + ")");
            }
        }
        Mirror m = new Mirror(link, true);
        checkSameImage(m, link.endpoint(), backend, backendEndpoint, reply);
        m.learn(reply.appliedTxId(), reply.semHead(), reply.redoHead());
        m.attached = true;
        Mirror[] next = Arrays.copyOf(ms, ms.length + 1);
        next[ms.length] = m;
        active = next;
        return m;
    }

    /**
     * Tells mirror {@code m} (MIRROR_POSTING) that every semantic record of this frontend after {@code sinceTxId}
     * is durable in its ring and every later one is posted there, under the backend attach epoch
     * {@code backendAttachEpoch}: the mirror counts this frontend for its in-sync state. Only after the records
     * were re-posted and FLUSHed there (or posted there all along). A failure is left to the mirror's reconnect,
     * which declares again; returns whether the mirror took it.
     */
    public static boolean declare(Mirror m, long backendAttachEpoch, long sinceTxId) {
        return posting(m, backendAttachEpoch, sinceTxId, ReplicationLayout.NO_SEM_START);
    }

    /**
     * Before the FLUSH of records re-posted from ring position {@code semStart} (a mirror added at run time or
     * reconnected): tells the mirror its ring holds this frontend's records from there, so its FLUSH check starts
     * there rather than at what it last saw. Returns whether the mirror took it.
     */
    public static boolean startAt(Mirror m, long backendAttachEpoch, long semStart) {
        return posting(m, backendAttachEpoch, ReplicationLayout.NO_DECLARATION, semStart);
    }

    private static boolean posting(Mirror m, long backendAttachEpoch, long sinceTxId, long semStart) {
        if (m.dropping && sinceTxId != ReplicationLayout.NO_DECLARATION) {
            return false;
        }
        try {
            m.link.call(ReplicationLayout.posting(m.link.frontendId(), backendAttachEpoch, sinceTxId, semStart));
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** The other mirrors, for the frontend that resumes on {@code promoted} (they stay mirrors). */
    public synchronized MirrorLinks without(Mirror promoted) {
        Mirror[] rest = Arrays.stream(active).filter(m -> m != promoted).toArray(Mirror[]::new);
        return new MirrorLinks(rest, acceptBackendRole);
    }

    @Override
    public void close() {
        for (Mirror m : active) {
            m.link.close();
        }
    }
}
