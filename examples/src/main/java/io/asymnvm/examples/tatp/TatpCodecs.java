package io.asymnvm.examples.tatp;

import io.asymnvm.structures.codec.KryoCodec;

/** The row codecs of TATP's tables (Kryo, application codec ids 1810..1813; changing a row type needs new ids). */
final class TatpCodecs {
    static final KryoCodec<SubscriberRow> SUBSCRIBER = new KryoCodec<>(1810, SubscriberRow.class, byte[].class);
    static final KryoCodec<AccessInfoRow> ACCESS_INFO = new KryoCodec<>(1811, AccessInfoRow.class);
    static final KryoCodec<SpecialFacilityRow> SPECIAL_FACILITY = new KryoCodec<>(1812, SpecialFacilityRow.class);
    static final KryoCodec<CallForwardingRow> CALL_FORWARDING = new KryoCodec<>(1813, CallForwardingRow.class);

    private TatpCodecs() {
    }
}
