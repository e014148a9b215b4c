package io.asymnvm.examples.tatp;

import io.asymnvm.examples.appbench.Outcome;
import io.asymnvm.examples.appbench.TransactionMix;

import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * TATP's standard mix over a population of {@code subscribers}, with the specification's parameters: subscriber ids
 * drawn non-uniformly ({@link #nonUniformSubscriber}), types 1..4, start times 0, 8, 16, end times 1..24, and
 * 15-digit numbers. A read that finds no row is {@link Outcome#NOT_FOUND}, a rolled-back write
 * {@link Outcome#USER_ABORT}.
 */
public final class TatpMix implements TransactionMix {
    public static final List<String> TYPES = List.of("GET_SUBSCRIBER_DATA", "GET_NEW_DESTINATION", "GET_ACCESS_DATA",
            "UPDATE_SUBSCRIBER_DATA", "UPDATE_LOCATION", "INSERT_CALL_FORWARDING", "DELETE_CALL_FORWARDING");
    private static final int[] PERCENTAGES = {35, 10, 35, 2, 14, 2, 2};

    private final Tatp tatp;
    private final long subscribers;
    private final long a;

    public TatpMix(Tatp tatp, long subscribers) {
        this.tatp = Objects.requireNonNull(tatp, "tatp");
        if (subscribers < 1 || subscribers > TatpKeys.MAX_SUBSCRIBER) {
            throw new IllegalArgumentException("subscribers outside [1, " + TatpKeys.MAX_SUBSCRIBER + "]: "
                    + subscribers);
        }
        this.subscribers = subscribers;
        this.a = nonUniformConstant(subscribers);
    }

    /** The specification's A: 65535 up to 1M subscribers, 1048575 up to 10M, 2097151 above. */
    public static long nonUniformConstant(long subscribers) {
        return subscribers <= 1_000_000 ? 65_535 : subscribers <= 10_000_000 ? 1_048_575 : 2_097_151;
    }

    /** A subscriber id in 1..P: {@code ((rand(0, A) | rand(1, P)) % P) + 1}, the specification's non-uniform draw. */
    public static long nonUniformSubscriber(SplittableRandom random, long subscribers, long a) {
        long x = random.nextLong(a + 1);
        long y = 1 + random.nextLong(subscribers);
        return ((x | y) % subscribers) + 1;
    }

    @Override
    public List<String> types() {
        return TYPES;
    }

    @Override
    public int[] percentages() {
        return PERCENTAGES.clone();
    }

    @Override
    public Outcome run(int type, SplittableRandom r) {
        long sId = nonUniformSubscriber(r, subscribers, a);
        try {
            switch (type) {
                case 0:
                    return tatp.getSubscriberData(sId) == null ? Outcome.NOT_FOUND : Outcome.OK;
                case 1:
                    return tatp.getNewDestination(sId, 1 + r.nextInt(4), startTime(r), 1 + r.nextInt(24)).isEmpty()
                            ? Outcome.NOT_FOUND : Outcome.OK;
                case 2:
                    return tatp.getAccessData(sId, 1 + r.nextInt(4)) == null ? Outcome.NOT_FOUND : Outcome.OK;
                case 3:
                    tatp.updateSubscriberData(sId, r.nextInt(2), 1 + r.nextInt(4), r.nextInt(256));
                    return Outcome.OK;
                case 4:
                    tatp.updateLocation(TatpKeys.subNbr(sId), r.nextInt());
                    return Outcome.OK;
                case 5:
                    tatp.insertCallForwarding(TatpKeys.subNbr(sId), 1 + r.nextInt(4), startTime(r),
                            1 + r.nextInt(24), TatpPopulation.digits(r, 15));
                    return Outcome.OK;
                case 6:
                    tatp.deleteCallForwarding(TatpKeys.subNbr(sId), 1 + r.nextInt(4), startTime(r));
                    return Outcome.OK;
                default:
                    throw new IllegalArgumentException("TATP transaction type outside [0, 6]: " + type);
            }
        } catch (TatpRollbackException e) {
            return Outcome.USER_ABORT;
        }
    }

    private static int startTime(SplittableRandom r) {
        return TatpKeys.START_TIMES[r.nextInt(3)];
    }
}
