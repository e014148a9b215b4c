package io.asymnvm.structures.codec;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Objects;

/**
 * The built-in codecs.
 *
 * <ul>
 *   <li>{@link #LONG} (id 1): 8 bytes, big-endian with the sign bit flipped, so that the unsigned byte order is
 *       the numeric order of {@code long}s; fixed size.</li>
 *   <li>{@link #STRING} (id 2): UTF-8. Keys are ordered by the unsigned bytes of their UTF-8 encoding, which is
 *       Unicode <em>code point</em> order. This differs from {@link String#compareTo} (UTF-16 code units) only
 *       for supplementary characters against U+E000..U+FFFF; {@link #STRING}'s comparator states the exact order.
 *       Unpaired surrogates are not representable in UTF-8 and are refused.</li>
 *   <li>{@link #BYTES} (id 3): the array itself, ordered unsigned lexicographically (shorter prefix first).</li>
 * </ul>
 */
public final class Codecs {
    public static final int LONG_ID = 1;
    public static final int STRING_ID = 2;
    public static final int BYTES_ID = 3;
    /** Smallest id an application codec may use. */
    public static final int FIRST_APPLICATION_ID = 1000;

    public static final KeyCodec<Long> LONG = new LongCodec();
    public static final KeyCodec<String> STRING = new StringCodec();
    public static final KeyCodec<byte[]> BYTES = new BytesCodec();

    private Codecs() {
    }

    private static final java.util.Map<Integer, ValueCodec<?>> APPLICATION =
            new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Makes an application codec known by id, so that a named structure using it can be re-created during
     * frontend recovery. {@link KryoCodec} registers itself; a different codec under a taken id is refused.
     */
    public static void register(ValueCodec<?> codec) {
        if (codec.id() < FIRST_APPLICATION_ID) {
            return;
        }
        ValueCodec<?> previous = APPLICATION.putIfAbsent(codec.id(), codec);
        if (previous != null && previous != codec && !previous.name().equals(codec.name())) {
            throw new IllegalArgumentException("codec id " + codec.id() + " already registered for "
                    + previous.name() + "; refused for " + codec.name());
        }
    }

    /** A built-in or registered codec by id, or an {@link IllegalArgumentException} naming the id. */
    public static ValueCodec<?> byId(int id) {
        if (id < FIRST_APPLICATION_ID) {
            return builtin(id);
        }
        ValueCodec<?> c = APPLICATION.get(id);
        if (c == null) {
            throw new IllegalArgumentException("no codec registered with id " + id
                    + " (register application codecs before opening the frontend)");
        }
        return c;
    }

    /** The built-in codec with this id, or an {@link IllegalArgumentException} naming the id. */
    public static KeyCodec<?> builtin(int id) {
        return switch (id) {
            case LONG_ID -> LONG;
            case STRING_ID -> STRING;
            case BYTES_ID -> BYTES;
            default -> throw new IllegalArgumentException("no built-in codec with id " + id);
        };
    }

    /** Compares Java strings in Unicode code point order (the order of their UTF-8 encodings). */
    public static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    }

    private static final class LongCodec implements KeyCodec<Long> {
        @Override
        public int id() {
            return LONG_ID;
        }

        @Override
        public String name() {
            return "long";
        }

        @Override
        public byte[] encode(Long value) {
            long v = value ^ Long.MIN_VALUE;
            byte[] b = new byte[8];
            for (int i = 7; i >= 0; i--) {
                b[i] = (byte) v;
                v >>>= 8;
            }
            return b;
        }

        @Override
        public Long decode(byte[] bytes, int offset, int length) {
            if (length != 8) {
                throw new CodecException("codec long cannot decode " + length + " bytes (expected 8)");
            }
            long v = 0;
            for (int i = 0; i < 8; i++) {
                v = (v << 8) | (bytes[offset + i] & 0xFF);
            }
            return v ^ Long.MIN_VALUE;
        }

        @Override
        public int fixedSize() {
            return 8;
        }

        @Override
        public Comparator<Long> comparator() {
            return Comparator.naturalOrder();
        }
    }

    private static final class StringCodec implements KeyCodec<String> {
        @Override
        public int id() {
            return STRING_ID;
        }

        @Override
        public String name() {
            return "string";
        }

        @Override
        public byte[] encode(String value) {
            Objects.requireNonNull(value, "string value");
            if (hasUnpairedSurrogate(value)) {
                throw new IllegalArgumentException("string with an unpaired surrogate has no UTF-8 encoding");
            }
            return value.getBytes(StandardCharsets.UTF_8);
        }

        private static boolean hasUnpairedSurrogate(String s) {
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (!Character.isSurrogate(c)) {
                    continue;
                }
                if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                } else {
                    return true;
                }
            }
            return false;
        }

        @Override
        public String decode(byte[] bytes, int offset, int length) {
            return new String(bytes, offset, length, StandardCharsets.UTF_8);
        }

        @Override
        public Comparator<String> comparator() {
            return Codecs::compareCodePoints;
        }
    }

    private static final class BytesCodec implements KeyCodec<byte[]> {
        @Override
        public int id() {
            return BYTES_ID;
        }

        @Override
        public String name() {
            return "bytes";
        }

        @Override
        public byte[] encode(byte[] value) {
            return value.clone();
        }

        @Override
        public byte[] decode(byte[] bytes, int offset, int length) {
            return Arrays.copyOfRange(bytes, offset, offset + length);
        }

        @Override
        public Comparator<byte[]> comparator() {
            return Arrays::compareUnsigned;
        }
    }
}
