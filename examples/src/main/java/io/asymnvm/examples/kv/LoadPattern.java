package io.asymnvm.examples.kv;

/**
 * The deterministic data set of {@code asymnvm kv load COUNT} / {@code verify COUNT}: key {@code i} is
 * {@code "key" + i}, its value {@code "value-" + i + "-" + 16 hex digits} mixed from {@code i} (SplitMix64), so
 * that a value written for the wrong key, truncated or stale is told apart from the right one.
 */
public final class LoadPattern {
    private LoadPattern() {
    }

    public static String key(long i) {
        return "key" + i;
    }

    public static String value(long i) {
        String hex = Long.toHexString(mix(i));
        return "value-" + i + "-" + "0".repeat(16 - hex.length()) + hex;
    }

    /** SplitMix64's finalizer: a bijection on longs that scatters consecutive inputs. */
    static long mix(long i) {
        long z = i + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
