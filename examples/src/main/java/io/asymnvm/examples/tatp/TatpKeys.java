package io.asymnvm.examples.tatp;

/**
 * The composite keys of TATP's tables packed into one {@code long} each, in one place. Subscriber ids are 1..
 * {@link #MAX_SUBSCRIBER}; the low bits hold the type (1..4 as 0..3) and, for Call_Forwarding, the start time
 * (0, 8, 16 as 0..2), so the rows of one subscriber and type are adjacent in key order:
 * <pre>
 *   Access_Info       s_id | ai_type-1 (2 bits)
 *   Special_Facility  s_id | sf_type-1 (2 bits)
 *   Call_Forwarding   s_id | sf_type-1 (2 bits) | start_time/8 (2 bits)
 * </pre>
 */
public final class TatpKeys {
    /** Largest subscriber id the packing holds (far above any population TATP defines). */
    public static final long MAX_SUBSCRIBER = (1L << 58) - 1;
    /** The start times of Call_Forwarding rows. */
    static final int[] START_TIMES = {0, 8, 16};
    private static final int TYPE_BITS = 2;
    private static final int START_BITS = 2;

    private TatpKeys() {
    }

    public static long accessInfo(long sId, int aiType) {
        return (requireSubscriber(sId) << TYPE_BITS) | (requireType("ai_type", aiType) - 1);
    }

    public static long specialFacility(long sId, int sfType) {
        return (requireSubscriber(sId) << TYPE_BITS) | (requireType("sf_type", sfType) - 1);
    }

    public static long callForwarding(long sId, int sfType, int startTime) {
        return (specialFacility(sId, sfType) << START_BITS) | requireStartTime(startTime) / 8;
    }

    /** The subscriber number of {@code sId}: the id as 15 decimal digits, zero-padded. */
    public static String subNbr(long sId) {
        String digits = Long.toString(requireSubscriber(sId));
        return "0".repeat(Math.max(0, 15 - digits.length())) + digits;
    }

    static long requireSubscriber(long sId) {
        if (sId < 1 || sId > MAX_SUBSCRIBER) {
            throw new IllegalArgumentException("subscriber id outside [1, " + MAX_SUBSCRIBER + "]: " + sId);
        }
        return sId;
    }

    static int requireType(String what, int type) {
        if (type < 1 || type > 4) {
            throw new IllegalArgumentException(what + " outside [1, 4]: " + type);
        }
        return type;
    }

    static int requireStartTime(int startTime) {
        if (startTime != 0 && startTime != 8 && startTime != 16) {
            throw new IllegalArgumentException("start_time not one of 0, 8, 16: " + startTime);
        }
        return startTime;
    }
}
