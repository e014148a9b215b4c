package io.asymnvm.core;

/**
 * Stable numeric codes for media and protocol faults. The numeric value travels on the wire in
 * error replies and never changes meaning; new faults get new numbers.
 */
public enum ErrorCode {
    UNKNOWN(1),
    MALFORMED_FRAME(2),
    UNKNOWN_FRAME_TYPE(3),
    OUT_OF_BOUNDS(4),
    ACCESS_DENIED(5),
    UNKNOWN_REGION(6),
    NOT_ATTACHED(7),
    STALE_EPOCH(8),
    UNALIGNED(9),
    NO_SPACE(10),
    CORRUPT_RECORD(11),
    CORRUPT_SUPERBLOCK(12),
    FORMAT_VERSION_MISMATCH(13),
    CONNECTION_LOST(14),
    TIMEOUT(15),
    BAD_REQUEST(16),
    RECOVERY_REQUIRED(17),
    UNKNOWN_FRONTEND(18),
    CATALOG_UNAVAILABLE(19),
    IDENTITY_MISMATCH(20),
    CACHE_INCOHERENT(21),
    /** A named root another frontend owns or has claimed for its creation. */
    NAME_TAKEN(22),
    /** A request that needs an authenticated session came before a successful challenge-response. */
    AUTH_REQUIRED(23),
    /** A challenge-response did not verify (wrong or unknown credential, replayed challenge). */
    AUTH_FAILED(24),
    /** One frontend's ring holds a damaged record: that frontend is quarantined, the others serve. */
    RING_CORRUPT(25),
    /** A semantic record names an argument class that is not registered for decoding. */
    CLASS_NOT_REGISTERED(26),
    /** A per-frontend quota (slabs) would be exceeded. */
    QUOTA_EXCEEDED(27),
    /** A server limit (connections, frame size, idle time, pending replies) was reached. */
    LIMIT_EXCEEDED(28),
    /**
     * The node is not the serving backend of its cluster (a mirror, or a former backend fenced by a newer epoch):
     * the call needs the backend.
     */
    NOT_PRIMARY(29),
    /** A mirror has not caught up (it is behind the backend, or not in sync): it cannot be promoted or serve. */
    REPLICA_BEHIND(30);

    private final int code;

    ErrorCode(int code) {
        this.code = code;
    }

    /** The stable wire value. */
    public int code() {
        return code;
    }

    /** Decodes a wire value; unknown values map to {@link #UNKNOWN} so an old peer never fails to parse. */
    public static ErrorCode fromCode(int code) {
        for (ErrorCode c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        return UNKNOWN;
    }
}
