package io.asymnvm.structures;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The hash of encoded keys used by the persistent hash map: part of the on-media format (bucket placement), so
 * it must never change for format version 1. xxHash64-style rounds over 8-byte little-endian words, then the
 * MurmurHash3 64-bit finalizer so that the low bits (which pick the bucket) depend on every input bit.
 */
final class KeyHash {
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long PRIME1 = 0x9E3779B185EBCA87L;
    private static final long PRIME2 = 0xC2B2AE3D27D4EB4FL;
    private static final long PRIME4 = 0x85EBCA77C2B2AE63L;
    private static final long PRIME5 = 0x27D4EB2F165667C5L;

    private KeyHash() {
    }

    static long hash64(byte[] b) {
        long h = PRIME5 ^ (b.length * PRIME1);
        int i = 0;
        for (; i + 8 <= b.length; i += 8) {
            long k = Long.rotateLeft((long) LONG.get(b, i) * PRIME2, 31) * PRIME1;
            h = Long.rotateLeft(h ^ k, 27) * PRIME1 + PRIME4;
        }
        for (; i < b.length; i++) {
            h = Long.rotateLeft(h ^ ((b[i] & 0xFFL) * PRIME5), 11) * PRIME1;
        }
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        h *= 0xC4CEB9FE1A85EC53L;
        h ^= h >>> 33;
        return h;
    }
}
