package io.asymnvm.structures;

import io.asymnvm.structures.codec.Codecs;

import java.util.Comparator;
import java.util.Random;

/** Key types the map tests run with, their codec, order and random generators. */
enum KeyKind {
    /** Long keys from a small range, so that operations collide often. */
    LONG(Codecs.LONG_ID) {
        @Override
        Object randomKey(Random rnd, int space) {
            return (long) rnd.nextInt(space) - space / 4;
        }

        @Override
        Object key(long i) {
            return i;
        }

        @Override
        Comparator<Object> comparator() {
            return (a, b) -> Long.compare((Long) a, (Long) b);
        }
    },
    /** String keys, one in eight of them long (up to ~900 bytes), some with non-ASCII characters. */
    STRING(Codecs.STRING_ID) {
        @Override
        Object randomKey(Random rnd, int space) {
            int n = rnd.nextInt(space);
            String base = (n % 5 == 0 ? "é" : "k") + n;
            int pad = n % 8 == 0 ? 100 + (n * 7919) % 800 : 0;
            return pad == 0 ? base : base + "/" + "p".repeat(pad);
        }

        @Override
        Object key(long i) {
            return "key" + i;
        }

        @Override
        Comparator<Object> comparator() {
            return (a, b) -> Codecs.compareCodePoints((String) a, (String) b);
        }
    };

    final int codecId;

    KeyKind(int codecId) {
        this.codecId = codecId;
    }

    /** A key drawn from {@code space} distinct keys. */
    abstract Object randomKey(Random rnd, int space);

    /** The {@code i}-th key of a load. */
    abstract Object key(long i);

    abstract Comparator<Object> comparator();

    /** A value: mostly short, sometimes empty, one in thirty large enough to live in a blob. */
    static String randomValue(Random rnd) {
        int r = rnd.nextInt(30);
        int length = r == 0 ? 300 + rnd.nextInt(3000) : r == 1 ? 0 : rnd.nextInt(40);
        StringBuilder sb = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            sb.append((char) ('a' + rnd.nextInt(26)));
        }
        return sb.toString();
    }

    /** The deterministic value of the {@code i}-th key of a load. */
    static String loadValue(long i) {
        return "value-" + Long.toHexString(i * 0x9E3779B97F4A7C15L);
    }
}
