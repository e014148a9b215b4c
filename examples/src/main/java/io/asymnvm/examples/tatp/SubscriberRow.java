package io.asymnvm.examples.tatp;

/**
 * A Subscriber row (its key {@code s_id} is the map's key): {@code sub_nbr} (the id as 15 digits), {@code bit_1..10}
 * as bits 0..9 of {@code bits}, {@code hex_1..10} as nibbles 0..9 of {@code hex}, {@code byte2_1..10}, and the
 * two locations.
 */
public record SubscriberRow(String subNbr, int bits, long hex, byte[] byte2, int mscLocation, int vlrLocation) {

    /** {@code bit_1} (0 or 1). */
    public int bit1() {
        return bits & 1;
    }

    SubscriberRow withBit1(int bit) {
        return new SubscriberRow(subNbr, (bits & ~1) | (bit & 1), hex, byte2, mscLocation, vlrLocation);
    }

    SubscriberRow withVlrLocation(int location) {
        return new SubscriberRow(subNbr, bits, hex, byte2, mscLocation, location);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SubscriberRow r && subNbr.equals(r.subNbr) && bits == r.bits && hex == r.hex
                && java.util.Arrays.equals(byte2, r.byte2) && mscLocation == r.mscLocation
                && vlrLocation == r.vlrLocation;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(subNbr, bits, hex, java.util.Arrays.hashCode(byte2), mscLocation, vlrLocation);
    }

    @Override
    public String toString() {
        return "SubscriberRow[" + subNbr + ", bits=" + Integer.toBinaryString(bits) + ", hex=" + Long.toHexString(hex)
                + ", byte2=" + java.util.Arrays.toString(byte2) + ", msc=" + mscLocation + ", vlr=" + vlrLocation
                + "]";
    }
}
