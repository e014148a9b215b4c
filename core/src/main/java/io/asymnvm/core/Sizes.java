package io.asymnvm.core;

import java.util.Locale;

/** Parses human sizes such as {@code 4096}, {@code 64k}, {@code 256m}, {@code 8g}. */
public final class Sizes {
    private Sizes() {
    }

    public static long parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.endsWith("ib")) {
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("b")) {
            t = t.substring(0, t.length() - 1);
        }
        long unit = 1;
        if (!t.isEmpty()) {
            switch (t.charAt(t.length() - 1)) {
                case 'k' -> unit = 1L << 10;
                case 'm' -> unit = 1L << 20;
                case 'g' -> unit = 1L << 30;
                case 't' -> unit = 1L << 40;
                default -> unit = 1;
            }
        }
        String digits = unit == 1 ? t : t.substring(0, t.length() - 1);
        try {
            long v = Long.parseLong(digits);
            if (v < 0) {
                throw new IllegalArgumentException("size must not be negative: " + text);
            }
            return Math.multiplyExact(v, unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("not a size (examples: 4096, 64k, 256m, 8g): " + text);
        }
    }
}
