package io.asymnvm.rdma;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Access;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The two-sided messages of the rdma fabric (SEND/RECV), little-endian, each in one registered message buffer of
 * {@link #MESSAGE_LENGTH} bytes. One-sided READ and WRITE carry no message; everything that needs the responder's
 * CPU does: CAS (DiSNI 2.x does not encode RDMA atomics), FLUSH (the write-back of "Correct, Fast Remote
 * Persistence", plus the durable watermark), control calls, and the access verdict for an operation the requester
 * holds no key for.
 *
 * <pre>
 * request:  type(1) pad(3) | seq(4) | regionId(4) | payloadLength(4) | offset(8) | arg1(8) | arg2(8) | payload
 *             CAS:     offset, arg1 = expected, arg2 = update
 *             FLUSH:   arg1 = stamp, arg2 = 1 if stamped; payload = ranges written since the last FLUSH
 *                      range: regionId(4) | length(4) | offset(8)
 *             CONTROL: payload = control message
 *             ACCESS:  offset, arg1 = length, arg2 = 1 for a write: may this session do it? (no memory touched)
 * response: type(1) pad(3) | seq(4) | errorCode(4) | keyCount(4) | value1(8) | value2(8) | bodyLength(4) pad(4)
 *           | keyCount keys | body
 *             ACK:   value1/value2 per request (CAS witness; FLUSH bytes persisted / persist calls)
 *             DATA:  body = control reply
 *             ERROR: errorCode, body = UTF-8 message
 *           key:     regionId(4) | access(1) pad(3) | windowOffset(8) | remoteAddress(8) | length(4) | rkey(4)
 *                    (one per registered memory region, MR, of a window: windows over 1 GiB have several)
 * </pre>
 * Keys ride on CONTROL and ACCESS responses only, for regions the session was granted and not yet given a key for.
 * Responses come back in request order; {@code seq} lets either side detect a lost or duplicated message.
 */
public final class RdmaMessageLayout {
    /** Size of every message buffer, send and receive, on both sides. */
    public static final int MESSAGE_LENGTH = 64 * 1024;

    public static final int TYPE_OFFSET = 0;
    public static final int SEQ_OFFSET = 4;
    public static final int REGION_OFFSET = 8;
    public static final int PAYLOAD_LENGTH_OFFSET = 12;
    public static final int ADDRESS_OFFSET = 16;
    public static final int ARG1_OFFSET = 24;
    public static final int ARG2_OFFSET = 32;
    public static final int REQUEST_HEADER_LENGTH = 40;

    public static final int ERROR_CODE_OFFSET = 8;
    public static final int KEY_COUNT_OFFSET = 12;
    public static final int VALUE1_OFFSET = 16;
    public static final int VALUE2_OFFSET = 24;
    public static final int BODY_LENGTH_OFFSET = 32;
    public static final int RESPONSE_HEADER_LENGTH = 40;

    public static final int RANGE_REGION_OFFSET = 0;
    public static final int RANGE_LENGTH_OFFSET = 4;
    public static final int RANGE_ADDRESS_OFFSET = 8;
    public static final int RANGE_LENGTH = 16;

    public static final int KEY_REGION_OFFSET = 0;
    public static final int KEY_ACCESS_OFFSET = 4;
    public static final int KEY_WINDOW_OFFSET = 8;
    public static final int KEY_ADDRESS_OFFSET = 16;
    public static final int KEY_LENGTH_OFFSET = 24;
    public static final int KEY_RKEY_OFFSET = 28;
    public static final int KEY_LENGTH = 32;

    public static final byte REQ_CAS = 1;
    public static final byte REQ_FLUSH = 2;
    public static final byte REQ_CONTROL = 3;
    public static final byte REQ_ACCESS = 4;

    public static final byte RESP_ACK = 1;
    public static final byte RESP_DATA = 2;
    public static final byte RESP_ERROR = 3;

    /** Largest request payload (a control message or the ranges of a FLUSH). */
    public static final int MAX_REQUEST_PAYLOAD = MESSAGE_LENGTH - REQUEST_HEADER_LENGTH;
    /** Most ranges one FLUSH carries; a requester with more coalesces them per region. */
    public static final int MAX_FLUSH_RANGES = MAX_REQUEST_PAYLOAD / RANGE_LENGTH;

    private static final byte ACCESS_READ = 1;
    private static final byte ACCESS_READ_WRITE = 2;

    private RdmaMessageLayout() {
    }

    /** A decoded request. {@code payload} is a copy (never null). */
    public record Request(byte type, int seq, int regionId, long offset, long arg1, long arg2, byte[] payload) {
    }

    /** A decoded response: keys first, then the body. */
    public record Response(byte type, int seq, ErrorCode error, long value1, long value2, List<Key> keys,
                           byte[] body) {
        /** The error as the requester's exception ({@code remote: } prefix, like the tcp fabric's). */
        public AsymNvmException exception() {
            return new AsymNvmException(error, "remote: " + new String(body, StandardCharsets.UTF_8));
        }
    }

    /** A range a FLUSH asks the responder to persist (window-relative, like the WRITE that wrote it). */
    public record Range(int regionId, long offset, int length) {
    }

    /**
     * One registered memory region of a window: the window's bytes {@code [windowOffset, windowOffset + length)}
     * are at {@code remoteAddress} under {@code rkey}, with {@code access} at most.
     */
    public record Key(int regionId, Access access, long windowOffset, long remoteAddress, int length, int rkey) {
        public boolean covers(long offset, long len) {
            return offset >= windowOffset && len >= 0 && offset - windowOffset <= length - len;
        }
    }

    // ---- requests ----

    /** Encodes a request at position 0 of {@code dst}; returns its length. */
    public static int encodeRequest(ByteBuffer dst, byte type, int seq, int regionId, long offset, long arg1,
                                    long arg2, byte[] payload, int payloadOffset, int payloadLength) {
        checkType(type, REQ_CAS, REQ_ACCESS, "request");
        checkPayload(payloadLength, MAX_REQUEST_PAYLOAD, "request payload");
        ByteBuffer b = dst.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        b.clear();
        b.put(TYPE_OFFSET, type).put(TYPE_OFFSET + 1, (byte) 0).putShort(TYPE_OFFSET + 2, (short) 0);
        b.putInt(SEQ_OFFSET, seq).putInt(REGION_OFFSET, regionId).putInt(PAYLOAD_LENGTH_OFFSET, payloadLength);
        b.putLong(ADDRESS_OFFSET, offset).putLong(ARG1_OFFSET, arg1).putLong(ARG2_OFFSET, arg2);
        if (payloadLength > 0) {
            b.put(REQUEST_HEADER_LENGTH, payload, payloadOffset, payloadLength);
        }
        return REQUEST_HEADER_LENGTH + payloadLength;
    }

    /** Encodes a FLUSH request with its ranges; returns its length. */
    public static int encodeFlush(ByteBuffer dst, int seq, long stamp, boolean stamped, List<Range> ranges) {
        if (ranges.size() > MAX_FLUSH_RANGES) {
            throw new IllegalArgumentException("flush of " + ranges.size() + " ranges exceeds the limit "
                    + MAX_FLUSH_RANGES);
        }
        byte[] payload = new byte[ranges.size() * RANGE_LENGTH];
        ByteBuffer p = ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < ranges.size(); i++) {
            Range r = ranges.get(i);
            int at = i * RANGE_LENGTH;
            p.putInt(at + RANGE_REGION_OFFSET, r.regionId()).putInt(at + RANGE_LENGTH_OFFSET, r.length())
                    .putLong(at + RANGE_ADDRESS_OFFSET, r.offset());
        }
        return encodeRequest(dst, REQ_FLUSH, seq, 0, 0, stamp, stamped ? 1 : 0, payload, 0, payload.length);
    }

    /** Decodes the {@code length} bytes of a received request; a malformed one is {@code MALFORMED_FRAME}. */
    public static Request decodeRequest(ByteBuffer src, int length) {
        if (length < REQUEST_HEADER_LENGTH || length > MESSAGE_LENGTH) {
            throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "rdma request of " + length
                    + " bytes outside [" + REQUEST_HEADER_LENGTH + ", " + MESSAGE_LENGTH + "]");
        }
        ByteBuffer b = src.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        byte type = b.get(TYPE_OFFSET);
        int payloadLength = b.getInt(PAYLOAD_LENGTH_OFFSET);
        if (payloadLength != length - REQUEST_HEADER_LENGTH) {
            throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "rdma request payload length " + payloadLength
                    + " does not match the " + (length - REQUEST_HEADER_LENGTH) + " bytes received after its header");
        }
        byte[] payload = new byte[payloadLength];
        b.get(REQUEST_HEADER_LENGTH, payload);
        return new Request(type, b.getInt(SEQ_OFFSET), b.getInt(REGION_OFFSET), b.getLong(ADDRESS_OFFSET),
                b.getLong(ARG1_OFFSET), b.getLong(ARG2_OFFSET), payload);
    }

    /** The ranges of a FLUSH request; a payload that is not a whole number of ranges is {@code MALFORMED_FRAME}. */
    public static List<Range> flushRanges(Request flush) {
        byte[] p = flush.payload();
        if (p.length % RANGE_LENGTH != 0) {
            throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "flush payload of " + p.length
                    + " bytes is not a multiple of the " + RANGE_LENGTH + "-byte range");
        }
        ByteBuffer b = ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN);
        List<Range> out = new ArrayList<>(p.length / RANGE_LENGTH);
        for (int at = 0; at < p.length; at += RANGE_LENGTH) {
            out.add(new Range(b.getInt(at + RANGE_REGION_OFFSET), b.getLong(at + RANGE_ADDRESS_OFFSET),
                    b.getInt(at + RANGE_LENGTH_OFFSET)));
        }
        return out;
    }

    // ---- responses ----

    /** Encodes a response at position 0 of {@code dst}; returns its length. */
    public static int encodeResponse(ByteBuffer dst, byte type, int seq, ErrorCode error, long value1, long value2,
                                     List<Key> keys, byte[] body) {
        checkType(type, RESP_ACK, RESP_ERROR, "response");
        int bodyLength = body == null ? 0 : body.length;
        int length = RESPONSE_HEADER_LENGTH + keys.size() * KEY_LENGTH + bodyLength;
        checkPayload(length - RESPONSE_HEADER_LENGTH, MESSAGE_LENGTH - RESPONSE_HEADER_LENGTH, "response payload");
        ByteBuffer b = dst.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        b.clear();
        b.put(TYPE_OFFSET, type).put(TYPE_OFFSET + 1, (byte) 0).putShort(TYPE_OFFSET + 2, (short) 0);
        b.putInt(SEQ_OFFSET, seq).putInt(ERROR_CODE_OFFSET, error == null ? 0 : error.code())
                .putInt(KEY_COUNT_OFFSET, keys.size());
        b.putLong(VALUE1_OFFSET, value1).putLong(VALUE2_OFFSET, value2);
        b.putInt(BODY_LENGTH_OFFSET, bodyLength).putInt(BODY_LENGTH_OFFSET + 4, 0);
        int at = RESPONSE_HEADER_LENGTH;
        for (Key k : keys) {
            b.putInt(at + KEY_REGION_OFFSET, k.regionId());
            b.put(at + KEY_ACCESS_OFFSET, k.access() == Access.READ_WRITE ? ACCESS_READ_WRITE : ACCESS_READ);
            b.put(at + KEY_ACCESS_OFFSET + 1, (byte) 0).putShort(at + KEY_ACCESS_OFFSET + 2, (short) 0);
            b.putLong(at + KEY_WINDOW_OFFSET, k.windowOffset()).putLong(at + KEY_ADDRESS_OFFSET, k.remoteAddress());
            b.putInt(at + KEY_LENGTH_OFFSET, k.length()).putInt(at + KEY_RKEY_OFFSET, k.rkey());
            at += KEY_LENGTH;
        }
        if (bodyLength > 0) {
            b.put(at, body);
        }
        return length;
    }

    /** Decodes the {@code length} bytes of a received response; a malformed one is {@code MALFORMED_FRAME}. */
    public static Response decodeResponse(ByteBuffer src, int length) {
        if (length < RESPONSE_HEADER_LENGTH || length > MESSAGE_LENGTH) {
            throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "rdma response of " + length
                    + " bytes outside [" + RESPONSE_HEADER_LENGTH + ", " + MESSAGE_LENGTH + "]");
        }
        ByteBuffer b = src.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        byte type = b.get(TYPE_OFFSET);
        if (type < RESP_ACK || type > RESP_ERROR) {
            throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "unknown rdma response type " + type);
        }
        int keyCount = b.getInt(KEY_COUNT_OFFSET);
        int bodyLength = b.getInt(BODY_LENGTH_OFFSET);
        long expected = RESPONSE_HEADER_LENGTH + (long) keyCount * KEY_LENGTH + bodyLength;
        if (keyCount < 0 || bodyLength < 0 || expected != length) {
            throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "rdma response with " + keyCount + " keys and a "
                    + bodyLength + "-byte body does not fit the " + length + " bytes received");
        }
        List<Key> keys = new ArrayList<>(keyCount);
        int at = RESPONSE_HEADER_LENGTH;
        for (int i = 0; i < keyCount; i++, at += KEY_LENGTH) {
            byte access = b.get(at + KEY_ACCESS_OFFSET);
            if (access != ACCESS_READ && access != ACCESS_READ_WRITE) {
                throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "rdma key " + i + " has unknown access "
                        + access);
            }
            keys.add(new Key(b.getInt(at + KEY_REGION_OFFSET), access == ACCESS_READ_WRITE ? Access.READ_WRITE
                    : Access.READ, b.getLong(at + KEY_WINDOW_OFFSET), b.getLong(at + KEY_ADDRESS_OFFSET),
                    b.getInt(at + KEY_LENGTH_OFFSET), b.getInt(at + KEY_RKEY_OFFSET)));
        }
        byte[] body = new byte[bodyLength];
        b.get(at, body);
        int code = b.getInt(ERROR_CODE_OFFSET);
        ErrorCode error = type == RESP_ERROR ? ErrorCode.fromCode(code) : null;
        return new Response(type, b.getInt(SEQ_OFFSET), error, b.getLong(VALUE1_OFFSET), b.getLong(VALUE2_OFFSET),
                keys, body);
    }

    /** An error response body: the message in UTF-8, cut to fit one message. */
    public static byte[] errorBody(String message) {
        byte[] b = String.valueOf(message).getBytes(StandardCharsets.UTF_8);
        int max = MESSAGE_LENGTH - RESPONSE_HEADER_LENGTH;
        return b.length <= max ? b : java.util.Arrays.copyOf(b, max);
    }

    private static void checkType(byte type, byte min, byte max, String what) {
        if (type < min || type > max) {
            throw new IllegalArgumentException("unknown rdma " + what + " type " + type);
        }
    }

    private static void checkPayload(int length, int max, String what) {
        if (length < 0 || length > max) {
            throw new AsymNvmException(ErrorCode.BAD_REQUEST, "rdma " + what + " of " + length
                    + " bytes exceeds the message limit " + max);
        }
    }
}
