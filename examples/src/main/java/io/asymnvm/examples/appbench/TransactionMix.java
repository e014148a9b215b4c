package io.asymnvm.examples.appbench;

import java.util.List;
import java.util.SplittableRandom;

/**
 * An application's transaction mix: named types with their percentages, and how to run one transaction of a type
 * with parameters drawn from a thread's random. {@link #run} is called by several threads at once.
 */
public interface TransactionMix {

    /** The transaction types' names, in a fixed order (the JSON keys of the per-type counts). */
    List<String> types();

    /** Each type's share of the mix in percent, in the order of {@link #types()}, summing to 100. */
    int[] percentages();

    /** Runs one transaction of type {@code type} (an index into {@link #types()}). */
    Outcome run(int type, SplittableRandom random);

    /** Checks that the percentages fit the types and sum to 100; returns their running sums. */
    static int[] cumulative(TransactionMix mix) {
        int[] p = mix.percentages();
        if (p.length != mix.types().size()) {
            throw new IllegalArgumentException(p.length + " percentages for " + mix.types().size() + " types");
        }
        int[] sums = new int[p.length];
        int sum = 0;
        for (int i = 0; i < p.length; i++) {
            if (p[i] < 0) {
                throw new IllegalArgumentException("negative percentage for " + mix.types().get(i) + ": " + p[i]);
            }
            sum += p[i];
            sums[i] = sum;
        }
        if (sum != 100) {
            throw new IllegalArgumentException("the mix's percentages sum to " + sum + ", not 100");
        }
        return sums;
    }

    /** The type whose share holds {@code draw} (0..99), given {@link #cumulative} sums. */
    static int pick(int[] cumulative, int draw) {
        for (int i = 0; i < cumulative.length; i++) {
            if (draw < cumulative[i]) {
                return i;
            }
        }
        throw new IllegalArgumentException("draw outside 0..99: " + draw);
    }
}
