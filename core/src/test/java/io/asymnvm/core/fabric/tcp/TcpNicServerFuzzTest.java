package io.asymnvm.core.fabric.tcp;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Access;
import io.asymnvm.core.fabric.ControlHandler;
import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.fabric.NicSession;
import io.asymnvm.core.fabric.PersistenceDomain;
import io.asymnvm.core.fabric.RegionTable;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.FrameLayout;
import io.asymnvm.core.region.ByteArrayRegion;
import io.asymnvm.core.testing.FuzzSeeds;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import static io.asymnvm.core.testing.RequestFrames.frame;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fuzzes the emulated NIC's frame decoding through the server's real pipeline (length-field decoder and NIC
 * handler over an {@link EmbeddedChannel}). The input's first byte chooses how the rest is cut into reads (so
 * frames also arrive split and coalesced); the rest is what a client sent on one connection.
 *
 * <p>Contract: every reply is a well-formed response frame, every error reply carries a known code other than
 * {@code UNKNOWN} (an untyped exception in the server becomes {@code UNKNOWN}), one reply per complete request
 * frame, an oversized length field gets one error reply and closes the connection, and memory the session was
 * never granted write access to (a read-only window, an ungranted window, bytes outside every window) is never
 * changed. Regression mode replays {@code TcpNicServerFuzzTestInputs/}; {@code JAZZER_FUZZ=1} (profile
 * {@code fuzz}) fuzzes.
 */
class TcpNicServerFuzzTest {
    static final int WRITABLE = 1;
    static final int READ_ONLY = 2;
    static final int NEVER_GRANTED = 3;
    private static final int WINDOW = 16 << 10;
    private static final int BASE = 4096;
    private static final int SIZE = BASE + 4 * WINDOW;

    private static final ByteArrayRegion MEMORY = new ByteArrayRegion("fuzzed NIC memory", pattern(SIZE));
    private static final byte[] INITIAL = MEMORY.read(0, SIZE);
    private static final TcpNicServer SERVER = new TcpNicServer(nic(), new InetSocketAddress("127.0.0.1", 0));

    private static byte[] pattern(int size) {
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) {
            b[i] = (byte) (i * 31 + 7);
        }
        return b;
    }

    private static EmulatedNic nic() {
        RegionTable regions = new RegionTable();
        regions.register(WRITABLE, MEMORY, BASE, WINDOW, null);
        regions.register(READ_ONLY, MEMORY, BASE + WINDOW, WINDOW, null);
        regions.register(NEVER_GRANTED, MEMORY, BASE + 2L * WINDOW, WINDOW, null);
        return new EmulatedNic(regions, new GrantingControl(), PersistenceDomain.ADR);
    }

    /**
     * A control plane with the real one's shape: an ATTACH grants the writable window read-write and the read-only
     * one read-only and points the FLUSH stamp into the writable window; anything else is refused with a typed code.
     */
    static final class GrantingControl implements ControlHandler {
        @Override
        public byte[] handle(NicSession session, byte[] request) {
            if (request.length < ControlMessageLayout.REQUEST_LENGTH) {
                throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "control request of " + request.length
                        + " bytes");
            }
            ByteBuffer b = ControlMessageLayout.wrap(request);
            int kind = b.getInt();
            if (kind != ControlMessageLayout.KIND_ATTACH) {
                throw new AsymNvmException(ErrorCode.BAD_REQUEST, "unknown control message kind " + kind);
            }
            session.bind(b.getInt(), 1);
            session.grant(WRITABLE, Access.READ_WRITE);
            session.grant(READ_ONLY, Access.READ);
            session.stampAt(WRITABLE, 0);
            return new byte[8];
        }
    }

    @FuzzTest(maxDuration = FuzzSeeds.MAX_DURATION)
    void fuzzFrames(byte[] input) {
        if (input.length == 0) {
            return;
        }
        int chunk = 1 + (input[0] & 0xFF) * 4;
        byte[] stream = Arrays.copyOfRange(input, 1, input.length);
        Expectation expected = Expectation.of(stream);
        EmbeddedChannel ch = new EmbeddedChannel(SERVER.childInitializer());
        ByteBuf replies = Unpooled.buffer();
        try {
            for (int at = 0; at < stream.length && ch.isOpen(); at += chunk) {
                ch.writeInbound(Unpooled.wrappedBuffer(stream, at, Math.min(chunk, stream.length - at)));
                ch.runPendingTasks();
                drain(ch, replies);
            }
            // control calls and FLUSH complete on the server's workers: wait (bounded) for every reply to come back
            awaitReplies(ch, replies, expected.frames + (expected.oversized ? 1 : 0));
            assertEquals(!expected.oversized, ch.isOpen(), "connection open after " + expected);
            int count = checkReplies(replies, expected.oversized);
            assertEquals(expected.frames + (expected.oversized ? 1 : 0), count, "replies for " + expected);
        } finally {
            replies.release();
            ch.finishAndReleaseAll();
        }
        byte[] now = MEMORY.read(0, SIZE);
        assertArrayEquals(Arrays.copyOfRange(INITIAL, 0, BASE), Arrays.copyOfRange(now, 0, BASE),
                "bytes before the windows changed");
        assertArrayEquals(Arrays.copyOfRange(INITIAL, BASE + WINDOW, SIZE), Arrays.copyOfRange(now, BASE + WINDOW,
                SIZE), "read-only, never granted or unregistered memory changed");
    }

    private static void awaitReplies(EmbeddedChannel ch, ByteBuf replies, int expected) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        do {
            ch.runPendingTasks();
            drain(ch, replies);
            if (frameCount(replies) >= expected) {
                ch.runPendingTasks(); // a close that follows the last reply
                return;
            }
            Thread.onSpinWait();
        } while (System.nanoTime() < deadline);
    }

    /** Complete frames in {@code r}, without consuming them. */
    private static int frameCount(ByteBuf r) {
        int count = 0;
        for (int at = r.readerIndex(); r.writerIndex() - at >= FrameLayout.LENGTH_FIELD_LENGTH; count++) {
            long length = Integer.toUnsignedLong(r.getIntLE(at));
            if (length > r.writerIndex() - at - FrameLayout.LENGTH_FIELD_LENGTH) {
                break;
            }
            at += FrameLayout.LENGTH_FIELD_LENGTH + (int) length;
        }
        return count;
    }

    private static void drain(EmbeddedChannel ch, ByteBuf into) {
        for (Object o; (o = ch.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            into.writeBytes(b);
            b.release();
        }
    }

    /** Checks every reply frame; returns how many there were. */
    private static int checkReplies(ByteBuf r, boolean lastIsOversized) {
        int count = 0;
        ErrorCode last = null;
        while (r.isReadable()) {
            assertTrue(r.readableBytes() >= FrameLayout.LENGTH_FIELD_LENGTH, "truncated reply length field");
            int length = r.readIntLE();
            assertTrue(length >= FrameLayout.RESPONSE_HEADER_LENGTH && length <= r.readableBytes(),
                    "reply length " + length + " with " + r.readableBytes() + " bytes left");
            int at = r.readerIndex();
            byte type = r.getByte(at + FrameLayout.TYPE_OFFSET);
            int code = r.getIntLE(at + FrameLayout.ERROR_CODE_OFFSET);
            if (type == FrameLayout.RESP_ERROR) {
                last = ErrorCode.fromCode(code);
                String message = r.toString(at + FrameLayout.RESPONSE_HEADER_LENGTH,
                        length - FrameLayout.RESPONSE_HEADER_LENGTH, StandardCharsets.UTF_8);
                assertNotEquals(ErrorCode.UNKNOWN, last, "untyped failure escaped the server: " + message);
                assertFalse(message.isBlank(), "error reply " + last + " without a message");
            } else {
                assertTrue(type == FrameLayout.RESP_ACK || type == FrameLayout.RESP_DATA, "reply type " + type);
                assertEquals(0, code, "error code in a " + type + " reply");
                last = null;
            }
            r.skipBytes(length);
            count++;
        }
        if (lastIsOversized) {
            assertTrue(last != null, "an oversized frame must be refused with an error reply");
        }
        return count;
    }

    /** What a stream must produce: its complete frames, and whether a length field beyond the limit comes first. */
    record Expectation(int frames, boolean oversized, int trailing) {
        static Expectation of(byte[] stream) {
            ByteBuffer b = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN);
            int frames = 0;
            int at = 0;
            while (stream.length - at >= FrameLayout.LENGTH_FIELD_LENGTH) {
                long frame = Integer.toUnsignedLong(b.getInt(at)) + FrameLayout.LENGTH_FIELD_LENGTH;
                if (frame > FrameLayout.MAX_FRAME_LENGTH) {
                    return new Expectation(frames, true, stream.length - at);
                }
                if (frame > stream.length - at) {
                    break;
                }
                at += (int) frame;
                frames++;
            }
            return new Expectation(frames, false, stream.length - at);
        }
    }

    /** The committed seeds: one chunking byte, then well-formed frames of every type (also once attached). */
    static Map<String, byte[]> seeds() {
        Map<String, byte[]> s = new LinkedHashMap<>();
        byte[] attach = ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, 0, 0);
        s.put("unattached-ops", stream(0xFF,
                frame(FrameLayout.REQ_READ, WRITABLE, 0, 64, 0, null),
                frame(FrameLayout.REQ_WRITE, WRITABLE, 8, 0, 0, new byte[16]),
                frame(FrameLayout.REQ_CAS, WRITABLE, 8, 0, 1, null),
                frame(FrameLayout.REQ_FLUSH, 0, 0, 5, 1, null)));
        s.put("attached-ops", stream(0xFF,
                frame(FrameLayout.REQ_CONTROL, 0, 0, 0, 0, attach),
                frame(FrameLayout.REQ_WRITE, WRITABLE, 64, 0, 0, "hello, fuzzer".getBytes(StandardCharsets.UTF_8)),
                frame(FrameLayout.REQ_READ, READ_ONLY, 128, 32, 0, null),
                frame(FrameLayout.REQ_WRITE, READ_ONLY, 0, 0, 0, new byte[8]),
                frame(FrameLayout.REQ_CAS, WRITABLE, 64, 0, 42, null),
                frame(FrameLayout.REQ_FLUSH, 0, 0, 9, 1, null),
                frame(FrameLayout.REQ_READ, NEVER_GRANTED, 0, 8, 0, null)));
        s.put("split-frames", stream(2,
                frame(FrameLayout.REQ_CONTROL, 0, 0, 0, 0, attach),
                frame(FrameLayout.REQ_READ, WRITABLE, WINDOW - 8, 16, 0, null),
                frame((byte) 9, 0, 0, 0, 0, null),
                new byte[] {1, 0, 0, 0, 5}));
        s.put("oversized", stream(0xFF, frame(FrameLayout.REQ_READ, WRITABLE, 0, 8, 0, null),
                new byte[] {(byte) 0xF0, (byte) 0xFF, (byte) 0xFF, 0x7F, 1, 2, 3}));
        return s;
    }

    private static byte[] stream(int chunkByte, byte[]... frames) {
        int n = 1;
        for (byte[] f : frames) {
            n += f.length;
        }
        ByteBuffer b = ByteBuffer.allocate(n).put((byte) chunkByte);
        for (byte[] f : frames) {
            b.put(f);
        }
        return b.array();
    }

    @Test
    void committedSeedsMatchTheirGenerator() {
        FuzzSeeds.check(getClass(), "fuzzFrames", seeds());
    }
}
