package io.asymnvm.backend.mirror;

import io.asymnvm.core.Checks;

/**
 * The lag an ASYNC mirror may have (issue 9, item 2; AsymNVM's periodic sync): at most {@code maxLagMillis}
 * milliseconds and {@code maxLagTx} acknowledged transactions (of any one frontend) not yet shipped to it. The
 * backend's shipper ships to an ASYNC mirror at least every {@link #shipIntervalMillis()} and as soon as a frontend
 * has {@code maxLagTx} unshipped transactions; a mirror whose lag still exceeds a bound is reported behind
 * ({@code CATCHING_UP} in the cluster configuration, {@code behind} in {@code status}) until it is back within both.
 *
 * @param maxLagMillis in [1, {@value #MAX_LAG_MILLIS}]
 * @param maxLagTx in [1, {@value #MAX_LAG_TX}]
 */
public record AsyncLagBounds(long maxLagMillis, long maxLagTx) {
    public static final long DEFAULT_MAX_LAG_MILLIS = 100;
    public static final long DEFAULT_MAX_LAG_TX = 10_000;
    public static final long MAX_LAG_MILLIS = 3_600_000;
    public static final long MAX_LAG_TX = 1L << 40;
    public static final AsyncLagBounds DEFAULTS = new AsyncLagBounds(DEFAULT_MAX_LAG_MILLIS, DEFAULT_MAX_LAG_TX);

    public AsyncLagBounds {
        Checks.requireRange("ASYNC max lag in ms (--async-max-lag-ms)", maxLagMillis, 1, MAX_LAG_MILLIS);
        Checks.requireRange("ASYNC max lag in transactions (--async-max-lag-tx)", maxLagTx, 1, MAX_LAG_TX);
    }

    /** How often the shipper ships at the latest: a quarter of the time bound (at least 1 ms). */
    public long shipIntervalMillis() {
        return Math.max(1, maxLagMillis / 4);
    }
}
