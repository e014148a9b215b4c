package io.asymnvm.core.fabric.tcp;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.FrameLayout;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;

import java.nio.ByteOrder;

/**
 * Splits the byte stream into {@link FrameLayout} request frames (length field stripped). A length field over
 * the server's limit is reported as soon as it is read, before any of the frame is buffered, as a
 * {@link FrameTooLongException} carrying the typed error for the reply: {@code LIMIT_EXCEEDED} when the frame
 * would be legal for the protocol but exceeds this server's configured limit, {@code MALFORMED_FRAME} when no
 * peer may send it at all. The stream cannot be trusted after that; the handler replies and closes.
 */
final class RequestFrameDecoder extends LengthFieldBasedFrameDecoder {
    private final int maxFrameLength;

    RequestFrameDecoder(int maxFrameLength) {
        super(ByteOrder.LITTLE_ENDIAN, maxFrameLength, 0, FrameLayout.LENGTH_FIELD_LENGTH, 0,
                FrameLayout.LENGTH_FIELD_LENGTH, true);
        this.maxFrameLength = maxFrameLength;
    }

    @Override
    protected long getUnadjustedFrameLength(ByteBuf buf, int offset, int length, ByteOrder order) {
        long bodyLength = super.getUnadjustedFrameLength(buf, offset, length, order);
        long frameLength = bodyLength + FrameLayout.LENGTH_FIELD_LENGTH;
        if (bodyLength < 0 || frameLength > maxFrameLength) {
            buf.skipBytes(buf.readableBytes()); // never decode the rest of an untrusted stream
            boolean legal = bodyLength >= 0 && frameLength <= FrameLayout.MAX_FRAME_LENGTH;
            throw new FrameTooLongException(new AsymNvmException(
                    legal ? ErrorCode.LIMIT_EXCEEDED : ErrorCode.MALFORMED_FRAME,
                    "frame of " + frameLength + " bytes exceeds the " + (legal ? "max frame length of this backend "
                            + "(" + maxFrameLength : "protocol's largest frame (" + FrameLayout.MAX_FRAME_LENGTH)
                            + " bytes); closing the connection"));
        }
        return bodyLength;
    }

    /** The decoder's refusal of a length field, with the error to send back. */
    static final class FrameTooLongException extends TooLongFrameException {
        private static final long serialVersionUID = 1L;
        private final AsymNvmException reply;

        FrameTooLongException(AsymNvmException reply) {
            super(reply.getMessage());
            this.reply = reply;
        }

        AsymNvmException reply() {
            return reply;
        }
    }
}
