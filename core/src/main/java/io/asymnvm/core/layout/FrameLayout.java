package io.asymnvm.core.layout;

/**
 * Frames of the TCP fabric (the emulated NIC's wire format), little-endian, each prefixed by its length.
 *
 * <pre>
 * request:  length(4) | type(1) pad(3) | regionId(4) | offset(8) | arg1(8) | arg2(8) | payload ...
 *             READ:    arg1 = length to read
 *             WRITE:   payload = bytes to write
 *             CAS:     arg1 = expected, arg2 = update
 *             FLUSH:   arg1 = stamp value (written to the session's stamp word after the persist), arg2 = 1 if stamped
 *             CONTROL: payload = control message (two-sided)
 * response: length(4) | type(1) pad(3) | errorCode(4) | value1(8) | value2(8) | payload ...
 *             ACK:   value1/value2 per request (CAS witness; FLUSH bytes persisted / persist calls)
 *             DATA:  payload = bytes read or control reply
 *             ERROR: errorCode, payload = UTF-8 message
 * </pre>
 * Responses come back in request order on a connection; there are no request ids.
 */
public final class FrameLayout {
    public static final int LENGTH_FIELD_LENGTH = 4;
    /** Largest frame including its length field (what the decoders accept). */
    public static final int MAX_FRAME_LENGTH = 64 << 20;

    public static final int TYPE_OFFSET = 0;
    public static final int REGION_OFFSET = 4;
    public static final int ADDRESS_OFFSET = 8;
    public static final int ARG1_OFFSET = 16;
    public static final int ARG2_OFFSET = 24;
    public static final int REQUEST_HEADER_LENGTH = 32;

    public static final int ERROR_CODE_OFFSET = 4;
    public static final int VALUE1_OFFSET = 8;
    public static final int VALUE2_OFFSET = 16;
    public static final int RESPONSE_HEADER_LENGTH = 24;

    public static final byte REQ_READ = 1;
    public static final byte REQ_WRITE = 2;
    public static final byte REQ_CAS = 3;
    public static final byte REQ_FLUSH = 4;
    public static final byte REQ_CONTROL = 5;

    public static final byte RESP_ACK = 1;
    public static final byte RESP_DATA = 2;
    public static final byte RESP_ERROR = 3;

    /** Largest READ a single request may ask for: its reply must fit in one frame. */
    public static final int MAX_READ_LENGTH = MAX_FRAME_LENGTH - LENGTH_FIELD_LENGTH - 24;
    /** Largest WRITE or control payload a single request may carry. */
    public static final int MAX_REQUEST_PAYLOAD = MAX_FRAME_LENGTH - LENGTH_FIELD_LENGTH - 32;

    private FrameLayout() {
    }
}
