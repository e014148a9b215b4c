package io.asymnvm.core.fabric.tcp;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.fabric.NicSession;
import io.asymnvm.core.layout.FrameLayout;
import io.asymnvm.core.logging.RateLimitedLog;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;

/**
 * Decodes one {@link FrameLayout} request, executes it through the {@link EmulatedNic} and encodes the reply.
 * Stateless apart from the connection passed in; called by one thread at a time per connection. Every fault
 * becomes an error reply with a stable code, never an exception out of here.
 */
final class NicRequestAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(NicRequestAdapter.class);
    /** Unexpected failures of a request: a peer may cause them at will, so at most a line a second. */
    private static final RateLimitedLog FAILED_REQUESTS = RateLimitedLog.warn(LOG);

    private final EmulatedNic nic;

    NicRequestAdapter(EmulatedNic nic) {
        this.nic = nic;
    }

    /** The request's frame type, or 0 for a frame too short to have one (it is answered with an error). */
    static byte type(ByteBuf frame) {
        return frame.readableBytes() < FrameLayout.REQUEST_HEADER_LENGTH ? 0
                : frame.getByte(frame.readerIndex() + FrameLayout.TYPE_OFFSET);
    }

    ByteBuf execute(NicSession session, ConnectionRegistry.Slot slot, ByteBuf f, ByteBufAllocator alloc) {
        try {
            if (f.readableBytes() < FrameLayout.REQUEST_HEADER_LENGTH) {
                throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "frame of " + f.readableBytes()
                        + " bytes is shorter than the " + FrameLayout.REQUEST_HEADER_LENGTH + "-byte header");
            }
            int base = f.readerIndex();
            byte type = f.getByte(base + FrameLayout.TYPE_OFFSET);
            int region = f.getIntLE(base + FrameLayout.REGION_OFFSET);
            long offset = f.getLongLE(base + FrameLayout.ADDRESS_OFFSET);
            long arg1 = f.getLongLE(base + FrameLayout.ARG1_OFFSET);
            long arg2 = f.getLongLE(base + FrameLayout.ARG2_OFFSET);
            int payloadAt = base + FrameLayout.REQUEST_HEADER_LENGTH;
            int payloadLength = f.readableBytes() - FrameLayout.REQUEST_HEADER_LENGTH;
            switch (type) {
                case FrameLayout.REQ_READ -> {
                    if (arg1 < 0 || arg1 > FrameLayout.MAX_READ_LENGTH) {
                        throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "read length " + arg1
                                + " outside [0, " + FrameLayout.MAX_READ_LENGTH + "]");
                    }
                    return response(alloc, FrameLayout.RESP_DATA, 0, 0, 0,
                            nic.read(session, region, offset, (int) arg1));
                }
                case FrameLayout.REQ_WRITE -> {
                    nic.write(session, region, offset, f.nioBuffer(payloadAt, payloadLength));
                    return response(alloc, FrameLayout.RESP_ACK, 0, 0, 0, null);
                }
                case FrameLayout.REQ_CAS -> {
                    long witness = nic.compareAndSwap(session, region, offset, arg1, arg2);
                    return response(alloc, FrameLayout.RESP_ACK, 0, witness, 0, null);
                }
                case FrameLayout.REQ_FLUSH -> {
                    long[] r = nic.flush(session, arg1, arg2 == 1);
                    return response(alloc, FrameLayout.RESP_ACK, 0, r[0], r[1], null);
                }
                case FrameLayout.REQ_CONTROL -> {
                    byte[] request = new byte[payloadLength];
                    f.getBytes(payloadAt, request);
                    slot.admitControl(request);
                    try {
                        return response(alloc, FrameLayout.RESP_DATA, 0, 0, 0, nic.control(session, request));
                    } finally {
                        slot.settle(session);
                    }
                }
                default -> throw new AsymNvmException(ErrorCode.UNKNOWN_FRAME_TYPE, "unknown frame type " + type);
            }
        } catch (AsymNvmException e) {
            return error(alloc, e);
        } catch (RuntimeException e) {
            FAILED_REQUESTS.log("request failed on session {}", session.id(), e);
            return error(alloc, new AsymNvmException(ErrorCode.UNKNOWN, e.toString()));
        }
    }

    static ByteBuf error(ByteBufAllocator alloc, AsymNvmException e) {
        return response(alloc, FrameLayout.RESP_ERROR, e.errorCode().code(), 0, 0,
                String.valueOf(e.getMessage()).getBytes(StandardCharsets.UTF_8));
    }

    private static ByteBuf response(ByteBufAllocator alloc, byte type, int code, long v1, long v2, byte[] payload) {
        int payloadLength = payload == null ? 0 : payload.length;
        ByteBuf out = alloc.buffer(FrameLayout.LENGTH_FIELD_LENGTH + FrameLayout.RESPONSE_HEADER_LENGTH
                + payloadLength);
        out.writeIntLE(FrameLayout.RESPONSE_HEADER_LENGTH + payloadLength);
        out.writeByte(type).writeByte(0).writeShort(0);
        out.writeIntLE(code);
        out.writeLongLE(v1);
        out.writeLongLE(v2);
        if (payload != null) {
            out.writeBytes(payload);
        }
        return out;
    }
}
