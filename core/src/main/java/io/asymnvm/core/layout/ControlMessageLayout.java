package io.asymnvm.core.layout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Two-sided control messages between a frontend and its backend (attach, slab grants, detach), carried as
 * the payload of a control call. Little-endian.
 *
 * <pre>
 * request: kind(4) | frontendId(4) | arg(8)
 *   ATTACH arg: 0 for a new incarnation, else the attach epoch a reconnecting incarnation held;
 *   a reconnecting incarnation appends the identity(16) of the PM image it was attached to
 *
 * ATTACH reply:
 *   0 backendEpoch(8)   8 attachEpoch(8)   16 pageSize(4)  20 recipe(4)
 *  24 semCapacity(8)   32 redoCapacity(8)  40 slabSize(8)  48 heapSize(8)
 *  56 appliedTxId(8)   64 semHead(8)       72 redoHead(8)  80 semValidTail(8)
 *  88 redoValidTail(8) 96 lastSemTxId(8)  104 ownedSlabs(4) 108 role(4): ROLE_BACKEND or ROLE_MIRROR
 * 112 identity(16)      the PM image's identity (superblock), so a frontend never resumes on another image
 * 128 slab index(8) x ownedSlabs
 *
 * GRANT_SLAB reply: slabIndex(8) | heapOffset(8)
 * RETURN_SLAB arg: the slab index; reply: empty (sent once its blocks are all free and applied on the backend)
 *
 * CATALOG_LOOKUP request: header | nameLength(4) | name (UTF-8)
 * CATALOG_BIND request:   header | nameLength(4) | name | type(4) keyCodec(4) valueCodec(4) pad(4) address(8)
 * CATALOG reply: found(4) | owner(4) | type(4) | keyCodec(4) | valueCodec(4) | pad(4) | address(8)
 *   (an unavailable catalog answers with an error reply)
 * DETACH / PING reply: empty
 *
 * CHALLENGE request: header (arg 0); reply: nonce(32), random, single use, valid on this connection only
 * authenticated ATTACH request (after a CHALLENGE):
 *   0 header(16)   16 identity(16), all zero for a new incarnation   32 proof(32)
 *   proof = HMAC-SHA256(secret of frontendId, proof message)
 * proof message: 0 nonce(32) | 32 frontendId(4) | 36 expectedEpoch(8)
 * STATUS request: header (frontendId and arg ignored; no attach needed)
 * STATUS reply: UTF-8 JSON, {"backend_epoch", "identity", "max_frontends", "frontends": [{"id", "attached",
 *   "attach_epoch", "applied_tx", "quarantined", "quarantine": {"ring", "offset", "what", "expected", "actual",
 *   "message"}, "replay_fault"}]} listing the frontends that ever attached, are quarantined or faulted
 * </pre>
 */
public final class ControlMessageLayout {
    public static final int KIND_ATTACH = 1;
    public static final int KIND_GRANT_SLAB = 2;
    public static final int KIND_DETACH = 3;
    public static final int KIND_PING = 4;
    public static final int KIND_CATALOG_LOOKUP = 5;
    public static final int KIND_CATALOG_BIND = 6;
    /**
     * Operational state of every frontend (attached, epochs, applied tx, quarantine), as UTF-8 JSON; needs no
     * attach (7 is the auth challenge's, 9 RETURN_SLAB's).
     */
    public static final int KIND_STATUS = 8;
    public static final int CATALOG_REPLY_LENGTH = 32;
    public static final int REQUEST_LENGTH = 16;

    public static final int ATTACH_FIXED_LENGTH = 128;

    // --- authentication (challenge-response before ATTACH) ---
    public static final int KIND_CHALLENGE = 7;
    public static final int NONCE_LENGTH = 32;
    public static final int PROOF_LENGTH = 32;
    public static final int ATTACH_IDENTITY_OFFSET = REQUEST_LENGTH;
    public static final int ATTACH_IDENTITY_LENGTH = 16;
    public static final int ATTACH_PROOF_OFFSET = ATTACH_IDENTITY_OFFSET + ATTACH_IDENTITY_LENGTH;
    public static final int AUTHENTICATED_ATTACH_LENGTH = ATTACH_PROOF_OFFSET + PROOF_LENGTH;
    public static final int PROOF_NONCE_OFFSET = 0;
    public static final int PROOF_FRONTEND_OFFSET = PROOF_NONCE_OFFSET + NONCE_LENGTH;
    public static final int PROOF_EPOCH_OFFSET = PROOF_FRONTEND_OFFSET + 4;
    public static final int PROOF_MESSAGE_LENGTH = PROOF_EPOCH_OFFSET + 8;

    /** An ATTACH carrying a proof; {@code identity} null for a new incarnation (sent as zeros). */
    public static byte[] authenticatedAttachRequest(int frontendId, long expectedEpoch, java.util.UUID identity,
                                                    byte[] proof) {
        if (proof.length != PROOF_LENGTH) {
            throw new IllegalArgumentException("proof of " + proof.length + " bytes, expected " + PROOF_LENGTH);
        }
        ByteBuffer b = ByteBuffer.allocate(AUTHENTICATED_ATTACH_LENGTH).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(KIND_ATTACH).putInt(frontendId).putLong(expectedEpoch);
        if (identity != null) {
            b.putLong(ATTACH_IDENTITY_OFFSET, identity.getMostSignificantBits())
                    .putLong(ATTACH_IDENTITY_OFFSET + 8, identity.getLeastSignificantBits());
        }
        b.put(ATTACH_PROOF_OFFSET, proof);
        return b.array();
    }

    /** The identity an ATTACH names, or null when it names none (absent or all zero). */
    public static java.util.UUID attachIdentity(byte[] request) {
        if (request.length < ATTACH_IDENTITY_OFFSET + ATTACH_IDENTITY_LENGTH) {
            return null;
        }
        ByteBuffer b = wrap(request);
        long hi = b.getLong(ATTACH_IDENTITY_OFFSET);
        long lo = b.getLong(ATTACH_IDENTITY_OFFSET + 8);
        return hi == 0 && lo == 0 ? null : new java.util.UUID(hi, lo);
    }

    /** The proof an ATTACH carries, or null when it carries none. */
    public static byte[] attachProof(byte[] request) {
        if (request.length < AUTHENTICATED_ATTACH_LENGTH) {
            return null;
        }
        byte[] proof = new byte[PROOF_LENGTH];
        System.arraycopy(request, ATTACH_PROOF_OFFSET, proof, 0, PROOF_LENGTH);
        return proof;
    }

    /** The bytes a proof authenticates: the backend's nonce, the frontend id and the expected epoch. */
    public static byte[] proofMessage(byte[] nonce, int frontendId, long expectedEpoch) {
        if (nonce.length != NONCE_LENGTH) {
            throw new IllegalArgumentException("nonce of " + nonce.length + " bytes, expected " + NONCE_LENGTH);
        }
        return ByteBuffer.allocate(PROOF_MESSAGE_LENGTH).order(ByteOrder.LITTLE_ENDIAN)
                .put(PROOF_NONCE_OFFSET, nonce).putInt(PROOF_FRONTEND_OFFSET, frontendId)
                .putLong(PROOF_EPOCH_OFFSET, expectedEpoch).array();
    }

    /** Gives an empty slab back to the backend (DESIGN §6); kinds 7 and 8 belong to other calls. */
    public static final int KIND_RETURN_SLAB = 9;

    // --- replication (mirror nodes, DESIGN §6); the messages are specified where they are implemented ---
    /** A backend (or a catching-up mirror) attaching to a mirror as its replication peer. */
    public static final int KIND_PEER_ATTACH = 10;
    /** Asks a mirror to become the backend under a new epoch. */
    public static final int KIND_PROMOTE = 11;
    /** Reserved for the replication protocol. */
    public static final int KIND_REPLICATION_RESERVED_12 = 12;
    /** Reserved for the replication protocol. */
    public static final int KIND_REPLICATION_RESERVED_13 = 13;

    /**
     * A frontend tells a mirror that it posts its semantic records there (a runtime add or a reconnect finished
     * re-posting and FLUSHing every retained record): format in {@link ReplicationLayout}.
     */
    public static final int KIND_MIRROR_POSTING = 14;

    /**
     * A frontend tells its backend, on its attached session, that it dropped a SYNC mirror: arg is its new posting
     * epoch ({@link PostingEpoch}). The backend replies once every SYNC mirror it ships to was told (REPLICATE
     * FRONTENDS), or will be paused by a new image copy before it is shipped anything: declarations under an older
     * generation no longer count. Reply: empty.
     */
    public static final int KIND_POSTING_GENERATION = 15;

    /** The ATTACH reply's role: the node serves as the backend of its image. */
    public static final int ROLE_BACKEND = 0;
    /** The ATTACH reply's role: the node is a mirror (semantic records and FLUSH only; no slabs, no catalog). */
    public static final int ROLE_MIRROR = 1;

    private ControlMessageLayout() {
    }

    public static byte[] request(int kind, int frontendId, long arg) {
        return ByteBuffer.allocate(REQUEST_LENGTH).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(kind).putInt(frontendId).putLong(arg).array();
    }

    /** An ATTACH of a reconnecting incarnation: the epoch it held and the identity of its PM image. */
    public static byte[] reattachRequest(int frontendId, long expectedEpoch, java.util.UUID identity) {
        return ByteBuffer.allocate(REQUEST_LENGTH + 16).order(ByteOrder.LITTLE_ENDIAN).putInt(KIND_ATTACH)
                .putInt(frontendId).putLong(expectedEpoch).putLong(identity.getMostSignificantBits())
                .putLong(identity.getLeastSignificantBits()).array();
    }

    /** A catalog request: the common header, then the name, then (for BIND) the entry. */
    public static byte[] catalogRequest(int kind, int frontendId, String name, int type, int keyCodec,
                                        int valueCodec, long address) {
        byte[] n = RootDirectoryLayout.checkName(name);
        boolean bind = kind == KIND_CATALOG_BIND;
        ByteBuffer b = ByteBuffer.allocate(REQUEST_LENGTH + 4 + n.length + (bind ? 24 : 0))
                .order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(kind).putInt(frontendId).putLong(0).putInt(n.length).put(n);
        if (bind) {
            b.putInt(type).putInt(keyCodec).putInt(valueCodec).putInt(0).putLong(address);
        }
        return b.array();
    }

    /** A catalog entry as the backend reports it; {@code owner} is the frontend whose directory holds it. */
    public record CatalogEntry(int owner, RootDirectoryLayout.Entry entry) {

        public static byte[] encode(CatalogEntry e) {
            ByteBuffer b = ByteBuffer.allocate(CATALOG_REPLY_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            if (e == null) {
                return b.array();
            }
            return b.putInt(1).putInt(e.owner()).putInt(e.entry().type()).putInt(e.entry().keyCodec())
                    .putInt(e.entry().valueCodec()).putInt(0).putLong(e.entry().address()).array();
        }

        /** Null when not found. */
        public static CatalogEntry decode(String name, byte[] reply) {
            if (reply.length != CATALOG_REPLY_LENGTH) {
                throw new IllegalArgumentException("catalog reply of " + reply.length + " bytes, expected "
                        + CATALOG_REPLY_LENGTH);
            }
            ByteBuffer b = wrap(reply);
            if (b.getInt(0) == 0) {
                return null;
            }
            return new CatalogEntry(b.getInt(4), new RootDirectoryLayout.Entry(name, b.getInt(8), b.getInt(12),
                    b.getInt(16), b.getLong(24)));
        }
    }

    public static ByteBuffer wrap(byte[] message) {
        return ByteBuffer.wrap(message).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The reply to ATTACH: everything a frontend needs to resume where its log stands. */
    public record AttachReply(long backendEpoch, long attachEpoch, int pageSize, int recipe, long semCapacity,
                              long redoCapacity, long slabSize, long heapSize, long appliedTxId, long semHead,
                              long redoHead, long semValidTail, long redoValidTail, long lastSemTxId,
                              java.util.UUID identity, long[] ownedSlabs, int role) {

        /** A reply from the serving backend ({@link #ROLE_BACKEND}). */
        public AttachReply(long backendEpoch, long attachEpoch, int pageSize, int recipe, long semCapacity,
                           long redoCapacity, long slabSize, long heapSize, long appliedTxId, long semHead,
                           long redoHead, long semValidTail, long redoValidTail, long lastSemTxId,
                           java.util.UUID identity, long[] ownedSlabs) {
            this(backendEpoch, attachEpoch, pageSize, recipe, semCapacity, redoCapacity, slabSize, heapSize,
                    appliedTxId, semHead, redoHead, semValidTail, redoValidTail, lastSemTxId, identity, ownedSlabs,
                    ROLE_BACKEND);
        }

        public boolean isMirror() {
            return role == ROLE_MIRROR;
        }

        public byte[] encode() {
            ByteBuffer b = ByteBuffer.allocate(ATTACH_FIXED_LENGTH + 8 * ownedSlabs.length)
                    .order(ByteOrder.LITTLE_ENDIAN);
            b.putLong(backendEpoch).putLong(attachEpoch).putInt(pageSize).putInt(recipe)
                    .putLong(semCapacity).putLong(redoCapacity).putLong(slabSize).putLong(heapSize)
                    .putLong(appliedTxId).putLong(semHead).putLong(redoHead).putLong(semValidTail)
                    .putLong(redoValidTail).putLong(lastSemTxId).putInt(ownedSlabs.length).putInt(role)
                    .putLong(identity.getMostSignificantBits()).putLong(identity.getLeastSignificantBits());
            for (long s : ownedSlabs) {
                b.putLong(s);
            }
            return b.array();
        }

        public static AttachReply decode(byte[] message) {
            if (message.length < ATTACH_FIXED_LENGTH) {
                throw new IllegalArgumentException("attach reply too short: " + message.length + " < "
                        + ATTACH_FIXED_LENGTH);
            }
            ByteBuffer b = wrap(message);
            long backendEpoch = b.getLong();
            long attachEpoch = b.getLong();
            int pageSize = b.getInt();
            int recipe = b.getInt();
            long semCap = b.getLong();
            long redoCap = b.getLong();
            long slabSize = b.getLong();
            long heapSize = b.getLong();
            long applied = b.getLong();
            long semHead = b.getLong();
            long redoHead = b.getLong();
            long semTail = b.getLong();
            long redoTail = b.getLong();
            long lastSemTx = b.getLong();
            int owned = b.getInt();
            int role = b.getInt();
            if (role != ROLE_BACKEND && role != ROLE_MIRROR) {
                throw new IllegalArgumentException("attach reply names role " + role + ", expected "
                        + ROLE_BACKEND + " (backend) or " + ROLE_MIRROR + " (mirror)");
            }
            java.util.UUID identity = new java.util.UUID(b.getLong(), b.getLong());
            if (owned < 0 || message.length != ATTACH_FIXED_LENGTH + 8L * owned) {
                throw new IllegalArgumentException("attach reply length " + message.length
                        + " does not match " + owned + " owned slabs");
            }
            long[] slabs = new long[owned];
            for (int i = 0; i < owned; i++) {
                slabs[i] = b.getLong();
            }
            return new AttachReply(backendEpoch, attachEpoch, pageSize, recipe, semCap, redoCap, slabSize,
                    heapSize, applied, semHead, redoHead, semTail, redoTail, lastSemTx, identity, slabs, role);
        }
    }
}
