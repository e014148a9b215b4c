package io.asymnvm.examples.tatp;

import io.asymnvm.examples.appbench.AppBench;
import io.asymnvm.examples.appbench.AppBenchRun;
import io.asymnvm.frontend.AsymNvm;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code bench tatp}: populates {@code scale} subscribers ({@value #POPULATE_BATCH} per transaction), runs the mix
 * (see {@link AppBenchRun}), and reports throughput, latency, the per-type counts and the rows after the run. The
 * comparison matrix runs it through {@link io.asymnvm.examples.appbench.AppReportWorkload}.
 */
public final class TatpBench extends AppBench {
    /** Subscribers populated per transaction. */
    public static final int POPULATE_BATCH = 32;
    /** Smallest population (the non-uniform draw needs a few subscribers to mean anything). */
    public static final long MIN_SUBSCRIBERS = 10;
    /** Bytes of PM and cache a subscriber's rows take, roughly (about ten rows with their slots and headers). */
    static final long BYTES_PER_SUBSCRIBER = 2048;

    public TatpBench() {
        super("tatp", "subscribers", BYTES_PER_SUBSCRIBER, MIN_SUBSCRIBERS);
    }

    @Override
    public Loaded load(AsymNvm nvm, long subscribers, long seed) {
        Tatp tatp = nvm.transactional(Tatp.class, new TatpImpl(nvm));
        populate(tatp, subscribers, seed);
        TatpMix mix = new TatpMix(tatp, subscribers);
        return Loaded.of(mix, () -> {
            TatpCounts counts = tatp.counts();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("subscriber_rows", counts.subscribers());
            m.put("call_forwarding_rows", counts.callForwardings());
            return m;
        });
    }

    /** Populates subscribers 1..{@code subscribers}, {@link #POPULATE_BATCH} per transaction; returns the rows. */
    public static long populate(Tatp tatp, long subscribers, long seed) {
        long rows = 0;
        for (long first = 1; first <= subscribers; first += POPULATE_BATCH) {
            rows += tatp.populate(first, (int) Math.min(POPULATE_BATCH, subscribers - first + 1), seed);
        }
        return rows;
    }
}
