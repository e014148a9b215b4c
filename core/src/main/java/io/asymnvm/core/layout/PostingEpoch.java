package io.asymnvm.core.layout;

/**
 * The epoch a frontend's SYNC declaration of a mirror is bound to (MIRROR_POSTING, REPLICATE FRONTENDS): the
 * frontend's attach epoch on the backend in the low bits and its posting generation, how many SYNC mirrors it has
 * dropped under that attach epoch, above them.
 *
 * <pre>
 *   63        40 39                       0
 *   | generation |       attachEpoch       |
 * </pre>
 *
 * A frontend that drops a mirror raises its generation on the backend (POSTING_GENERATION) before any commit is
 * acknowledged without that mirror; a mirror counts a declaration only while it covers the backend's posting epoch
 * (same attach epoch, a generation at least as high), and one in sync whose declaration a raised generation voids
 * ({@link #voids}) turns catching up (see {@code MirrorReplayGate}). A frontend that never dropped a mirror has generation 0: its
 * posting epoch is its attach epoch.
 */
public final class PostingEpoch {
    public static final int GENERATION_SHIFT = 40;
    public static final long ATTACH_EPOCH_MASK = (1L << GENERATION_SHIFT) - 1;
    public static final long MAX_GENERATION = (1L << (63 - GENERATION_SHIFT)) - 1;

    private PostingEpoch() {
    }

    /** The posting epoch of generation {@code generation} under {@code attachEpoch}. */
    public static long pack(long attachEpoch, long generation) {
        if (attachEpoch < 0 || attachEpoch > ATTACH_EPOCH_MASK) {
            throw new IllegalArgumentException("attach epoch " + attachEpoch + " outside [0, " + ATTACH_EPOCH_MASK
                    + "]");
        }
        if (generation < 0 || generation > MAX_GENERATION) {
            throw new IllegalArgumentException("posting generation " + generation + " outside [0, " + MAX_GENERATION
                    + "]");
        }
        return generation << GENERATION_SHIFT | attachEpoch;
    }

    public static long attachEpoch(long postingEpoch) {
        return postingEpoch & ATTACH_EPOCH_MASK;
    }

    public static long generation(long postingEpoch) {
        return postingEpoch >>> GENERATION_SHIFT;
    }

    /** Whether a declaration under {@code declared} counts for the backend's {@code reported} posting epoch. */
    public static boolean covers(long declared, long reported) {
        return attachEpoch(declared) == attachEpoch(reported) && generation(declared) >= generation(reported);
    }

    /**
     * Whether the backend's {@code reported} posting epoch shows that the frontend may have dropped a mirror whose
     * declaration is {@code declared} (0: none): it dropped one under its current attach epoch (generation above 0),
     * and this declaration does not cover it. A frontend re-declares the mirrors it keeps before it raises its
     * generation, so only a mirror it dropped (or one that missed its declarations) is voided; a new attach epoch
     * alone (a reconnect, generation 0) voids nothing: the frontend still posts to every mirror it declared.
     */
    public static boolean voids(long reported, long declared) {
        return generation(reported) > 0 && (declared == 0 || !covers(declared, reported));
    }

    /** "attach epoch E" or "attach epoch E, posting generation G". */
    public static String describe(long postingEpoch) {
        long g = generation(postingEpoch);
        return "attach epoch " + attachEpoch(postingEpoch) + (g == 0 ? "" : ", posting generation " + g);
    }
}
