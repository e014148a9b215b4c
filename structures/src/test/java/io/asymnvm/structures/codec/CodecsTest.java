package io.asymnvm.structures.codec;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Built-in and Kryo codecs: round trips, order preservation, ids, and refusal of bytes they cannot decode. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CodecsTest {

    /** An application value type for the Kryo codec. */
    record Account(String owner, long balance, List<String> tags) {
    }

    private static <T> void assertOrderPreserving(KeyCodec<T> codec, T a, T b, String ctx) {
        int byObjects = Integer.signum(codec.comparator().compare(a, b));
        int byBytes = Integer.signum(Arrays.compareUnsigned(codec.encode(a), codec.encode(b)));
        assertEquals(byObjects, byBytes, ctx + ": " + a + " vs " + b);
    }

    @Test
    void shouldEncodeLongsInNumericOrder() {
        long seed = Long.getLong("asymnvm.seed", 3);
        Random rnd = new Random(seed);
        long[] edge = {Long.MIN_VALUE, -1, 0, 1, Long.MAX_VALUE, -256, 255};
        for (long a : edge) {
            for (long b : edge) {
                assertOrderPreserving(Codecs.LONG, a, b, "seed=" + seed);
            }
        }
        for (int i = 0; i < 10_000; i++) {
            long a = rnd.nextLong();
            long b = rnd.nextInt(3) == 0 ? a + rnd.nextInt(5) - 2 : rnd.nextLong();
            assertOrderPreserving(Codecs.LONG, a, b, "seed=" + seed);
            assertEquals(a, Codecs.LONG.decode(Codecs.LONG.encode(a)), "seed=" + seed);
        }
        assertEquals(8, Codecs.LONG.fixedSize());
        assertThrows(CodecException.class, () -> Codecs.LONG.decode(new byte[7]));
    }

    @Test
    void shouldOrderStringsByCodePoint() {
        long seed = Long.getLong("asymnvm.seed", 5);
        Random rnd = new Random(seed);
        String[] samples = {"", "a", "ab", "b", "é", "\uFFFF", "\uD83D\uDE00", "z\uD83D\uDE00", "\uE000", "A"};
        for (String a : samples) {
            for (String b : samples) {
                assertOrderPreserving(Codecs.STRING, a, b, "sample");
                assertEquals(a, Codecs.STRING.decode(Codecs.STRING.encode(a)));
            }
        }
        assertTrue(Codecs.compareCodePoints("\uFFFF", "\uD83D\uDE00") < 0, "U+FFFF sorts before U+1F600");
        assertTrue("\uFFFF".compareTo("\uD83D\uDE00") > 0, "String.compareTo disagrees (UTF-16 order)");
        int[] pool = {'a', 'z', 0xE9, 0x7FF, 0x800, 0xFFFD, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF};
        for (int i = 0; i < 5000; i++) {
            String a = randomString(rnd, pool);
            String b = randomString(rnd, pool);
            assertOrderPreserving(Codecs.STRING, a, b, "seed=" + seed);
        }
        assertThrows(IllegalArgumentException.class, () -> Codecs.STRING.encode("bad\uD800"));
    }

    private static String randomString(Random rnd, int[] pool) {
        StringBuilder sb = new StringBuilder();
        int n = rnd.nextInt(5);
        for (int i = 0; i < n; i++) {
            sb.appendCodePoint(pool[rnd.nextInt(pool.length)]);
        }
        return sb.toString();
    }

    @Test
    void shouldOrderBytesUnsignedAndCopyOnEncode() {
        byte[][] samples = {{}, {0}, {0, 0}, {1}, {(byte) 0x80}, {(byte) 0xFF}, {(byte) 0xFF, 0}};
        for (byte[] a : samples) {
            for (byte[] b : samples) {
                assertOrderPreserving(Codecs.BYTES, a, b, "bytes");
            }
        }
        byte[] v = {1, 2, 3};
        byte[] e = Codecs.BYTES.encode(v);
        v[0] = 9;
        assertArrayEquals(new byte[] {1, 2, 3}, e);
    }

    @Test
    void shouldResolveBuiltinsByStableId() {
        assertEquals(Codecs.LONG, Codecs.builtin(1));
        assertEquals(Codecs.STRING, Codecs.builtin(2));
        assertEquals(Codecs.BYTES, Codecs.builtin(3));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Codecs.builtin(77));
        assertTrue(e.getMessage().contains("77"), e.getMessage());
    }

    @Test
    void shouldRoundTripRegisteredClassesWithKryoAndRefuseForeignBytes() {
        KryoCodec<Account> codec = new KryoCodec<>(1000, Account.class, List.class, java.util.ArrayList.class);
        Account a = new Account("ada", 42, new java.util.ArrayList<>(List.of("x", "y")));
        byte[] bytes = codec.encode(a);
        assertEquals(a, codec.decode(bytes));
        assertArrayEquals(bytes, codec.encode(a), "deterministic encoding");
        assertEquals(1000, codec.id());
        byte[] padded = Arrays.copyOf(bytes, bytes.length + 3);
        assertThrows(CodecException.class, () -> codec.decode(padded, 0, padded.length));
        assertThrows(CodecException.class, () -> codec.decode(new byte[] {(byte) 0xFF, (byte) 0xFF, 1}));
        byte[] framed = new byte[bytes.length + 5];
        System.arraycopy(bytes, 0, framed, 5, bytes.length);
        assertEquals(a, codec.decode(framed, 5, bytes.length), "decodes at an offset");
        IllegalArgumentException low = assertThrows(IllegalArgumentException.class,
                () -> new KryoCodec<>(5, Account.class));
        assertTrue(low.getMessage().contains("1000"), low.getMessage());
    }
}
