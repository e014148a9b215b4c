package io.asymnvm.core.testing;

import io.asymnvm.core.layout.FrameLayout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Request frames of the tcp fabric as raw bytes ({@link FrameLayout}), for tests that speak the wire directly. */
public final class RequestFrames {
    private RequestFrames() {
    }

    /** A length-prefixed request frame; {@code payload} may be null. */
    public static byte[] frame(byte type, int region, long offset, long arg1, long arg2, byte[] payload) {
        int p = payload == null ? 0 : payload.length;
        ByteBuffer b = ByteBuffer.allocate(FrameLayout.LENGTH_FIELD_LENGTH + FrameLayout.REQUEST_HEADER_LENGTH + p)
                .order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(FrameLayout.REQUEST_HEADER_LENGTH + p);
        int base = FrameLayout.LENGTH_FIELD_LENGTH;
        b.put(base + FrameLayout.TYPE_OFFSET, type);
        b.putInt(base + FrameLayout.REGION_OFFSET, region);
        b.putLong(base + FrameLayout.ADDRESS_OFFSET, offset);
        b.putLong(base + FrameLayout.ARG1_OFFSET, arg1);
        b.putLong(base + FrameLayout.ARG2_OFFSET, arg2);
        if (payload != null) {
            b.position(base + FrameLayout.REQUEST_HEADER_LENGTH);
            b.put(payload);
        }
        return b.array();
    }

    /** A control call: {@code payload} in a CONTROL frame. */
    public static byte[] control(byte[] payload) {
        return frame(FrameLayout.REQ_CONTROL, 0, 0, 0, 0, payload);
    }

    /** Arbitrary bytes behind a length field that counts them (a frame of any body, even a short one). */
    public static byte[] lengthPrefixed(byte[] body) {
        return ByteBuffer.allocate(FrameLayout.LENGTH_FIELD_LENGTH + body.length).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(body.length).put(body).array();
    }
}
