package io.asymnvm.core.layout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * The replication control messages between a backend and its mirrors (DESIGN §6; kinds 10-13 of
 * {@link ControlMessageLayout}). Little-endian. Every call but REPLICATE follows a CHALLENGE on the same connection
 * and carries {@code proof = HMAC-SHA256(replication secret, proof message)} (the proof message of
 * {@link ControlMessageLayout#proofMessage} with the purpose below in place of the frontend id), so a captured proof
 * serves neither another call nor another purpose; with authentication off the proof is all zero and unchecked.
 *
 * <pre>
 * PEER_ATTACH (10), backend to mirror: 0 header: kind | purpose PEER_ATTACH | backendEpoch
 *                                     16 identity(16) of the backend's image   32 proof(32)
 *   reply: 0 mirrorEpoch(8) | 8 role(4) | 12 state(4) | 16 identity(16)
 * PROMOTE (11), operator to mirror:     0 header: kind | purpose PROMOTE | 0    16 proof(32)
 *   reply: newEpoch(8)
 * ADD_MIRROR (12), mirror to backend:   0 header: kind | purpose ADD_MIRROR | flags   16 proof(32)
 *                                     48 port(4) | 52 hostLength(4) | 56 host (UTF-8)
 *   flags: 0 = geometry only, {@link #ADD_SHIP} = also ship to host:port, {@link #ADD_ASYNC} (with ADD_SHIP) = the
 *          mirror is ASYNC: frontends do not post to it, the backend ships their semantic records as well
 *   reply: the backend's superblock ({@link SuperblockLayout#LENGTH} bytes, carrying its current epoch)
 * REPLICATE (13), backend to mirror on its attached peer session: 0 header: kind | op | 0   16 body
 *   SHIPPED:   frontends(4) | events(4) | redoLimit(8) x frontends | [slab(8) ownerWord(8) barrier(8)] x events
 *              (the backend's slab grants and returns since the last SHIPPED, in order; a return's barrier is its
 *              old owner's redo head when it was taken back: that owner's writes to the slab all lie before it)
 *   COPY_DONE: frontends(4) | slabs(4) | [applied(8) redoHead(8) semHead(8) target(8)] x frontends
 *              | ownerWord(8) x slabs
 *   FRONTENDS: frontends(4) | 0(4) | postingEpoch(8) x frontends   (the backend's {@link PostingEpoch} of each
 *              frontend it waits for: attach epoch and posting generation; 0 for none; sent before COPY_DONE and
 *              whenever one changes)
 *   reply: the mirror's state(4)
 * MIRROR_POSTING (14), frontend to mirror on its attached session: 0 header: kind | frontendId | postingEpoch
 *                                     16 sinceTxId(8) | 24 semStart(8)
 *   semStart >= 0 (sent before the re-post is FLUSHed): the frontend's records here start at ring position
 *   semStart (what lies before was applied by the backend and released; it reaches this mirror as redo), so the
 *   FLUSH watermark check starts there; {@link #NO_SEM_START} leaves it.
 *   sinceTxId >= 0 (sent after that FLUSH): the frontend re-posted and FLUSHed every semantic record after
 *   sinceTxId here and posts every later one; its posting epoch ({@link PostingEpoch}: its attach epoch on the backend
 *   and how many mirrors it dropped under it) names the incarnation, session and mirror set the statement is about;
 *   {@link #NO_DECLARATION} declares nothing.
 *   reply: the mirror's state(4)
 * </pre>
 */
public final class ReplicationLayout {
    /** REPLICATE: the redo ring bytes up to each limit and this slab owner table were written and flushed. */
    public static final int KIND_ADD_MIRROR = ControlMessageLayout.KIND_REPLICATION_RESERVED_12;
    public static final int KIND_REPLICATE = ControlMessageLayout.KIND_REPLICATION_RESERVED_13;

    /** Purposes, carried in the header's frontend-id word and bound into the proof. */
    public static final int PURPOSE_PEER_ATTACH = -1;
    public static final int PURPOSE_PROMOTE = -2;
    public static final int PURPOSE_ADD_MIRROR = -3;

    public static final int OP_SHIPPED = 1;
    public static final int OP_COPY_DONE = 2;
    public static final int OP_FRONTENDS = 3;

    public static final int KIND_MIRROR_POSTING = ControlMessageLayout.KIND_MIRROR_POSTING;
    public static final int POSTING_EPOCH_OFFSET = 8;
    public static final int POSTING_SINCE_OFFSET = ControlMessageLayout.REQUEST_LENGTH;
    public static final int POSTING_SEM_START_OFFSET = POSTING_SINCE_OFFSET + 8;
    public static final int POSTING_LENGTH = POSTING_SEM_START_OFFSET + 8;
    public static final long NO_DECLARATION = -1;
    public static final long NO_SEM_START = -1;

    public static final long ADD_SHIP = 1;
    /** ADD_MIRROR flag: an ASYNC mirror (issue 9): the backend also ships the frontends' durable semantic records. */
    public static final long ADD_ASYNC = 2;

    public static final int IDENTITY_OFFSET = ControlMessageLayout.REQUEST_LENGTH;
    public static final int PEER_PROOF_OFFSET = IDENTITY_OFFSET + 16;
    public static final int PEER_ATTACH_LENGTH = PEER_PROOF_OFFSET + ControlMessageLayout.PROOF_LENGTH;
    public static final int PROOF_OFFSET = ControlMessageLayout.REQUEST_LENGTH;
    public static final int PROMOTE_LENGTH = PROOF_OFFSET + ControlMessageLayout.PROOF_LENGTH;
    public static final int ADD_PORT_OFFSET = PROOF_OFFSET + ControlMessageLayout.PROOF_LENGTH;
    public static final int ADD_HOST_LENGTH_OFFSET = ADD_PORT_OFFSET + 4;
    public static final int ADD_HOST_OFFSET = ADD_HOST_LENGTH_OFFSET + 4;
    public static final int MAX_HOST_LENGTH = 255;

    public static final int PEER_REPLY_LENGTH = 32;
    public static final int BODY_OFFSET = ControlMessageLayout.REQUEST_LENGTH;
    public static final int COPY_ENTRY_LENGTH = 32;
    public static final int EVENT_LENGTH = 24;
    /** Most slab events one SHIPPED carries. */
    public static final int MAX_EVENTS = 1 << 16;

    /** The mirror's states (PEER_ATTACH and REPLICATE replies, status). */
    public static final int STATE_CATCHING_UP = 1;
    public static final int STATE_IN_SYNC = 2;
    /** A promoted node, serving as the backend. */
    public static final int STATE_SERVING = 3;

    private ReplicationLayout() {
    }

    public static String stateName(int state) {
        return switch (state) {
            case STATE_CATCHING_UP -> "catching_up";
            case STATE_IN_SYNC -> "in_sync";
            case STATE_SERVING -> "serving";
            default -> "unknown(" + state + ")";
        };
    }

    public static ByteBuffer wrap(byte[] m) {
        return ByteBuffer.wrap(m).order(ByteOrder.LITTLE_ENDIAN);
    }

    public static byte[] peerAttach(long backendEpoch, UUID identity, byte[] proof) {
        return wrap(new byte[PEER_ATTACH_LENGTH]).putInt(ControlMessageLayout.KIND_PEER_ATTACH)
                .putInt(PURPOSE_PEER_ATTACH).putLong(backendEpoch)
                .putLong(identity.getMostSignificantBits()).putLong(identity.getLeastSignificantBits())
                .put(proof).array();
    }

    public static UUID identity(byte[] request) {
        ByteBuffer b = wrap(request);
        return new UUID(b.getLong(IDENTITY_OFFSET), b.getLong(IDENTITY_OFFSET + 8));
    }

    public static byte[] proof(byte[] request, int offset) {
        byte[] p = new byte[ControlMessageLayout.PROOF_LENGTH];
        System.arraycopy(request, offset, p, 0, p.length);
        return p;
    }

    /** The reply to PEER_ATTACH. */
    public record PeerReply(long mirrorEpoch, int role, int state, UUID identity) {
        public byte[] encode() {
            return wrap(new byte[PEER_REPLY_LENGTH]).putLong(mirrorEpoch).putInt(role).putInt(state)
                    .putLong(identity.getMostSignificantBits()).putLong(identity.getLeastSignificantBits()).array();
        }

        public static PeerReply decode(byte[] m) {
            if (m.length != PEER_REPLY_LENGTH) {
                throw new IllegalArgumentException("peer attach reply of " + m.length + " bytes, expected "
                        + PEER_REPLY_LENGTH);
            }
            ByteBuffer b = wrap(m);
            return new PeerReply(b.getLong(), b.getInt(), b.getInt(), new UUID(b.getLong(), b.getLong()));
        }
    }

    public static byte[] promote(byte[] proof) {
        return wrap(new byte[PROMOTE_LENGTH]).putInt(ControlMessageLayout.KIND_PROMOTE).putInt(PURPOSE_PROMOTE)
                .putLong(0).put(proof).array();
    }

    public static byte[] addMirror(long flags, String host, int port, byte[] proof) {
        byte[] h = host.getBytes(StandardCharsets.UTF_8);
        if (h.length > MAX_HOST_LENGTH) {
            throw new IllegalArgumentException("mirror host name of " + h.length + " bytes, limit "
                    + MAX_HOST_LENGTH);
        }
        return wrap(new byte[ADD_HOST_OFFSET + h.length]).putInt(KIND_ADD_MIRROR).putInt(PURPOSE_ADD_MIRROR)
                .putLong(flags).put(proof).putInt(port).putInt(h.length).put(h).array();
    }

    /** The mirror address of an ADD_MIRROR request, validated. */
    public record MirrorAddress(String host, int port) {
    }

    public static MirrorAddress addMirrorAddress(byte[] request) {
        if (request.length < ADD_HOST_OFFSET) {
            throw new IllegalArgumentException("ADD_MIRROR request of " + request.length + " bytes, at least "
                    + ADD_HOST_OFFSET);
        }
        ByteBuffer b = wrap(request);
        int port = b.getInt(ADD_PORT_OFFSET);
        int n = b.getInt(ADD_HOST_LENGTH_OFFSET);
        if (n < 1 || n > MAX_HOST_LENGTH || request.length != ADD_HOST_OFFSET + n) {
            throw new IllegalArgumentException("ADD_MIRROR host length " + n + " outside [1, " + MAX_HOST_LENGTH
                    + "] or not matching the request's " + request.length + " bytes");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("ADD_MIRROR port " + port + " outside [1, 65535]");
        }
        return new MirrorAddress(new String(request, ADD_HOST_OFFSET, n, StandardCharsets.UTF_8), port);
    }

    /** MIRROR_POSTING of {@code frontendId}, attached to the backend under {@code backendAttachEpoch}. */
    public static byte[] posting(int frontendId, long backendAttachEpoch, long sinceTxId, long semStart) {
        return wrap(new byte[POSTING_LENGTH]).putInt(KIND_MIRROR_POSTING).putInt(frontendId)
                .putLong(backendAttachEpoch).putLong(sinceTxId).putLong(semStart).array();
    }

    /** A declaration only (see the format). */
    public static byte[] posting(int frontendId, long backendAttachEpoch, long sinceTxId) {
        return posting(frontendId, backendAttachEpoch, sinceTxId, NO_SEM_START);
    }

    /** The checked fields of a MIRROR_POSTING: {frontendId, backendAttachEpoch, sinceTxId, semStart}. */
    public static long[] decodePosting(byte[] request) {
        if (request.length != POSTING_LENGTH) {
            throw new IllegalArgumentException("MIRROR_POSTING of " + request.length + " bytes, expected "
                    + POSTING_LENGTH);
        }
        ByteBuffer b = wrap(request);
        long epoch = b.getLong(POSTING_EPOCH_OFFSET);
        long since = b.getLong(POSTING_SINCE_OFFSET);
        long semStart = b.getLong(POSTING_SEM_START_OFFSET);
        if (epoch < 1 || since < NO_DECLARATION || semStart < NO_SEM_START
                || semStart != NO_SEM_START && semStart % LogRecordLayout.ALIGNMENT != 0) {
            throw new IllegalArgumentException("MIRROR_POSTING with backend attach epoch " + epoch
                    + " (at least 1), since tx " + since + " (at least " + NO_DECLARATION + ") and semantic start "
                    + semStart + " (at least " + NO_SEM_START + ", a multiple of " + LogRecordLayout.ALIGNMENT + ")");
        }
        return new long[] {b.getInt(4), epoch, since, semStart};
    }

    /** REPLICATE FRONTENDS: the backend's attach epoch of each frontend (0: not attached). */
    public static byte[] frontends(long[] attachEpochs) {
        ByteBuffer b = wrap(new byte[BODY_OFFSET + 8 + attachEpochs.length * 8]);
        b.putInt(KIND_REPLICATE).putInt(OP_FRONTENDS).putLong(0).putInt(attachEpochs.length).putInt(0);
        for (long e : attachEpochs) {
            b.putLong(e);
        }
        return b.array();
    }

    /** The REPLICATE op of {@code m} (checked by the decoders). */
    public static int replicateOp(byte[] m) {
        return m.length < BODY_OFFSET + 8 ? -1 : wrap(m).getInt(4);
    }

    /** Decodes REPLICATE FRONTENDS, checking the count against the receiving image's frontends. */
    public static long[] decodeFrontends(byte[] m, int maxFrontends) {
        if (m.length != BODY_OFFSET + 8 + (long) maxFrontends * 8 || wrap(m).getInt(BODY_OFFSET) != maxFrontends) {
            throw new IllegalArgumentException("REPLICATE FRONTENDS of " + m.length + " bytes, expected "
                    + (BODY_OFFSET + 8 + maxFrontends * 8) + " for the " + maxFrontends + " frontends of this image");
        }
        ByteBuffer b = wrap(m);
        b.position(BODY_OFFSET + 8);
        long[] epochs = new long[maxFrontends];
        for (int f = 0; f < maxFrontends; f++) {
            epochs[f] = b.getLong();
            if (epochs[f] < 0) {
                throw new IllegalArgumentException("REPLICATE FRONTENDS names attach epoch " + epochs[f]
                        + " for frontend " + f + " (at least 0)");
            }
        }
        return epochs;
    }

    /**
     * A REPLICATE body: SHIPPED carries per frontend the redo limit and the slab events {slab, ownerWord, barrier};
     * COPY_DONE per frontend the copy's checkpoint {applied, redoHead, semHead, target} and the slab table.
     */
    public record Replicate(int op, long[] redoLimits, long[][] copyCheckpoints, long[] ownerWords, long[][] events) {
        public static Replicate shipped(long[] redoLimits, long[][] events) {
            return new Replicate(OP_SHIPPED, redoLimits, null, null, events);
        }

        public static Replicate copyDone(long[][] copyCheckpoints, long[] ownerWords) {
            return new Replicate(OP_COPY_DONE, null, copyCheckpoints, ownerWords, null);
        }

        public byte[] encode() {
            boolean shipped = op == OP_SHIPPED;
            int frontends = shipped ? redoLimits.length : copyCheckpoints.length;
            int tail = shipped ? events.length * EVENT_LENGTH : ownerWords.length * 8;
            ByteBuffer b = wrap(new byte[BODY_OFFSET + 8 + frontends * (shipped ? 8 : COPY_ENTRY_LENGTH) + tail]);
            b.putInt(KIND_REPLICATE).putInt(op).putLong(0).putInt(frontends)
                    .putInt(shipped ? events.length : ownerWords.length);
            for (int f = 0; f < frontends; f++) {
                if (shipped) {
                    b.putLong(redoLimits[f]);
                } else {
                    for (int k = 0; k < 4; k++) {
                        b.putLong(copyCheckpoints[f][k]);
                    }
                }
            }
            if (shipped) {
                for (long[] e : events) {
                    b.putLong(e[0]).putLong(e[1]).putLong(e[2]);
                }
            } else {
                for (long w : ownerWords) {
                    b.putLong(w);
                }
            }
            return b.array();
        }

        /** Decodes and checks the counts against the receiving image's geometry. */
        public static Replicate decode(byte[] m, int maxFrontends, long slabCount) {
            if (m.length < BODY_OFFSET + 8) {
                throw new IllegalArgumentException("REPLICATE of " + m.length + " bytes, at least "
                        + (BODY_OFFSET + 8));
            }
            ByteBuffer b = wrap(m);
            int op = b.getInt(4);
            if (op != OP_SHIPPED && op != OP_COPY_DONE) {
                throw new IllegalArgumentException("REPLICATE op " + op + ", expected " + OP_SHIPPED + " or "
                        + OP_COPY_DONE);
            }
            boolean shipped = op == OP_SHIPPED;
            b.position(BODY_OFFSET);
            int frontends = b.getInt();
            int count = b.getInt();
            long expected = BODY_OFFSET + 8 + (long) frontends * (shipped ? 8 : COPY_ENTRY_LENGTH)
                    + (long) count * (shipped ? EVENT_LENGTH : 8);
            if (frontends != maxFrontends || (shipped ? count < 0 || count > MAX_EVENTS : count != slabCount)
                    || m.length != expected) {
                throw new IllegalArgumentException("REPLICATE for " + frontends + " frontends with " + count
                        + (shipped ? " slab events" : " slabs") + " (" + m.length + " bytes) but this image has "
                        + maxFrontends + " frontends and " + slabCount + " slabs (at most " + MAX_EVENTS
                        + " events)");
            }
            long[] limits = shipped ? new long[frontends] : null;
            long[][] copy = shipped ? null : new long[frontends][4];
            for (int f = 0; f < frontends; f++) {
                if (shipped) {
                    limits[f] = b.getLong();
                } else {
                    for (int k = 0; k < 4; k++) {
                        copy[f][k] = b.getLong();
                    }
                }
            }
            if (shipped) {
                long[][] events = new long[count][];
                for (int i = 0; i < count; i++) {
                    events[i] = new long[] {b.getLong(), b.getLong(), b.getLong()};
                    if (events[i][0] < 0 || events[i][0] >= slabCount) {
                        throw new IllegalArgumentException("slab event names slab " + events[i][0] + " outside [0, "
                                + slabCount + ")");
                    }
                }
                return shipped(limits, events);
            }
            long[] owners = new long[count];
            for (int i = 0; i < count; i++) {
                owners[i] = b.getLong();
            }
            return copyDone(copy, owners);
        }
    }
}
