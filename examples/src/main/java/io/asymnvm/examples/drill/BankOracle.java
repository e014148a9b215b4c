package io.asymnvm.examples.drill;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Iterator;

/**
 * What the bank must hold: the initial balances plus every acknowledged transfer, in order. Predicts each
 * transfer's outcome ({@link io.asymnvm.examples.bank.BankImpl} aborts when the source holds less than the
 * amount) and remembers the last {@value #HISTORY} applied transfers, so a mismatching bank can be explained as
 * "the state before the last k acknowledged transfers" (they were lost). Single-threaded.
 */
final class BankOracle {
    static final int HISTORY = 100_000;
    private static final int MISMATCHES_SHOWN = 3;

    /** How a recovered bank compares with the oracle. */
    enum Outcome {
        /** Equal to the oracle (an in-doubt transfer, if any, was not committed). */
        MATCH,
        /** Equal to the oracle plus the in-doubt transfer, which is now part of the oracle. */
        IN_DOUBT_COMMITTED,
        /** Different, total intact: acknowledged transfers are missing (or others appeared). */
        LOST,
        /** The total changed: part of a transfer is visible. */
        PARTIAL,
        /** Not even the number of accounts matches. */
        WRONG_SIZE
    }

    /** An outcome and, for the failing ones, what differs. */
    record Verdict(Outcome outcome, String detail) {
        boolean ok() {
            return outcome == Outcome.MATCH || outcome == Outcome.IN_DOUBT_COMMITTED;
        }
    }

    private final long[] balances;
    private final long total;
    private final ArrayDeque<Transfer> history = new ArrayDeque<>();

    BankOracle(int accounts, long initialBalance) {
        balances = new long[accounts];
        Arrays.fill(balances, initialBalance);
        total = Math.multiplyExact((long) accounts, initialBalance);
    }

    int accounts() {
        return balances.length;
    }

    /** The total every state of the bank must have. */
    long total() {
        return total;
    }

    long[] balances() {
        return balances.clone();
    }

    /** Whether {@code t} commits on the current state (else it aborts with insufficient funds). */
    boolean commits(Transfer t) {
        return balances[t.from()] >= t.amount();
    }

    /** Applies an acknowledged (or in-doubt but committed) transfer. */
    void apply(Transfer t) {
        balances[t.from()] -= t.amount();
        balances[t.to()] += t.amount();
        history.addLast(t);
        if (history.size() > HISTORY) {
            history.removeFirst();
        }
    }

    /** The balances if {@code t} were applied too. */
    long[] with(Transfer t) {
        long[] b = balances.clone();
        b[t.from()] -= t.amount();
        b[t.to()] += t.amount();
        return b;
    }

    boolean matches(long[] observed) {
        return Arrays.equals(balances, observed);
    }

    /**
     * How many of the most recent acknowledged transfers {@code observed} lacks, if it equals the state before
     * them (at most {@link #HISTORY} back); -1 if it is no such state.
     */
    int missingSuffix(long[] observed) {
        long[] b = balances.clone();
        int k = 0;
        for (Iterator<Transfer> it = history.descendingIterator(); it.hasNext(); ) {
            Transfer t = it.next();
            b[t.from()] += t.amount();
            b[t.to()] -= t.amount();
            k++;
            if (Arrays.equals(b, observed)) {
                return k;
            }
        }
        return -1;
    }

    /**
     * Compares balances read back after a recovery: equal to the oracle, or to the oracle plus {@code inDoubt}
     * (the transfer a killed worker had begun without an acknowledgement; null if none), which is then applied.
     * On a failing verdict {@code observed} becomes the new truth, so one fault is reported once.
     */
    Verdict check(long[] observed, Transfer inDoubt) {
        if (observed.length != balances.length) {
            return new Verdict(Outcome.WRONG_SIZE, "the bank has " + observed.length + " accounts, expected "
                    + balances.length);
        }
        if (matches(observed)) {
            return new Verdict(Outcome.MATCH, "");
        }
        if (inDoubt != null && commits(inDoubt) && Arrays.equals(observed, with(inDoubt))) {
            apply(inDoubt);
            return new Verdict(Outcome.IN_DOUBT_COMMITTED, "");
        }
        StringBuilder diff = new StringBuilder();
        int shown = 0;
        for (int a = 0; a < observed.length && shown < MISMATCHES_SHOWN; a++) {
            if (observed[a] != balances[a]) {
                diff.append(shown++ == 0 ? "" : ", ").append("account ").append(a).append(" holds ")
                        .append(observed[a]).append(", oracle ").append(balances[a]);
            }
        }
        if (inDoubt != null) {
            diff.append("; in doubt: ").append(inDoubt);
        }
        long sum = Arrays.stream(observed).sum();
        Verdict v;
        if (sum != total) {
            v = new Verdict(Outcome.PARTIAL, "the total is " + sum + ", must be " + total + " (" + diff + ")");
        } else {
            int missing = missingSuffix(observed);
            v = new Verdict(Outcome.LOST, "acknowledged transfers are missing"
                    + (missing > 0 ? " (the bank equals the state before the last " + missing + " of them)" : "")
                    + " (" + diff + ")");
        }
        reset(observed);
        return v;
    }

    /** Takes {@code observed} as the new truth (after a reported violation, so one fault is counted once). */
    void reset(long[] observed) {
        System.arraycopy(observed, 0, balances, 0, balances.length);
        history.clear();
    }
}
