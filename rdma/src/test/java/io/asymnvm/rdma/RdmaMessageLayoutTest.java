package io.asymnvm.rdma;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Access;
import io.asymnvm.rdma.RdmaMessageLayout.Key;
import io.asymnvm.rdma.RdmaMessageLayout.Range;
import io.asymnvm.rdma.RdmaMessageLayout.Request;
import io.asymnvm.rdma.RdmaMessageLayout.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Round trips and refusals of the rdma fabric's two-sided messages; runs anywhere (no device needed). */
@Timeout(30)
class RdmaMessageLayoutTest {
    private final ByteBuffer buf = ByteBuffer.allocateDirect(RdmaMessageLayout.MESSAGE_LENGTH);

    @Test
    void shouldRoundTripCasControlAndAccessRequests() {
        int n = RdmaMessageLayout.encodeRequest(buf, RdmaMessageLayout.REQ_CAS, 7, 17, 4096, -1L, Long.MIN_VALUE,
                null, 0, 0);
        assertEquals(RdmaMessageLayout.REQUEST_HEADER_LENGTH, n);
        Request cas = RdmaMessageLayout.decodeRequest(buf, n);
        assertEquals(RdmaMessageLayout.REQ_CAS, cas.type());
        assertEquals(7, cas.seq());
        assertEquals(17, cas.regionId());
        assertEquals(4096, cas.offset());
        assertEquals(-1L, cas.arg1());
        assertEquals(Long.MIN_VALUE, cas.arg2());
        assertEquals(0, cas.payload().length);

        byte[] control = new byte[1000];
        new Random(42).nextBytes(control);
        n = RdmaMessageLayout.encodeRequest(buf, RdmaMessageLayout.REQ_CONTROL, Integer.MAX_VALUE, 0, 0, 0, 0, control,
                100, 900);
        Request call = RdmaMessageLayout.decodeRequest(buf, n);
        assertEquals(Integer.MAX_VALUE, call.seq());
        assertArrayEquals(java.util.Arrays.copyOfRange(control, 100, 1000), call.payload());

        n = RdmaMessageLayout.encodeRequest(buf, RdmaMessageLayout.REQ_ACCESS, 3, 1, 65_536, 4096, 1, null, 0, 0);
        Request access = RdmaMessageLayout.decodeRequest(buf, n);
        assertEquals(RdmaMessageLayout.REQ_ACCESS, access.type());
        assertEquals(4096, access.arg1());
        assertEquals(1, access.arg2());
    }

    @Test
    void shouldRoundTripFlushRangesUpToTheLimit() {
        List<Range> ranges = new ArrayList<>();
        Random rnd = new Random(7);
        for (int i = 0; i < RdmaMessageLayout.MAX_FLUSH_RANGES; i++) {
            ranges.add(new Range(16 + rnd.nextInt(64), rnd.nextLong() >>> 1, rnd.nextInt(Integer.MAX_VALUE)));
        }
        int n = RdmaMessageLayout.encodeFlush(buf, 9, 0x0123_4567_89AB_CDEFL, true, ranges);
        assertTrue(n <= RdmaMessageLayout.MESSAGE_LENGTH && n > RdmaMessageLayout.MESSAGE_LENGTH
                - RdmaMessageLayout.RANGE_LENGTH, "the limit fills a message: " + n);
        Request flush = RdmaMessageLayout.decodeRequest(buf, n);
        assertEquals(RdmaMessageLayout.REQ_FLUSH, flush.type());
        assertEquals(0x0123_4567_89AB_CDEFL, flush.arg1());
        assertEquals(1, flush.arg2());
        assertEquals(ranges, RdmaMessageLayout.flushRanges(flush));

        n = RdmaMessageLayout.encodeFlush(buf, 10, 5, false, List.of());
        Request empty = RdmaMessageLayout.decodeRequest(buf, n);
        assertEquals(0, empty.arg2());
        assertEquals(List.of(), RdmaMessageLayout.flushRanges(empty));

        List<Range> tooMany = new ArrayList<>(ranges);
        tooMany.add(new Range(1, 0, 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RdmaMessageLayout.encodeFlush(buf, 11, 0, false, tooMany));
        assertTrue(e.getMessage().contains(String.valueOf(RdmaMessageLayout.MAX_FLUSH_RANGES)), e.getMessage());
    }

    @Test
    void shouldRoundTripResponsesWithKeysAndBody() {
        List<Key> keys = List.of(
                new Key(1, Access.READ, 0, 0x7f00_0000_0000L, 1 << 30, 0x1234),
                new Key(1, Access.READ, 1L << 30, 0x7f00_4000_0000L, 1 << 20, 0x5678),
                new Key(17, Access.READ_WRITE, 0, 0x7e00_0000_0000L, 65_536, -2));
        byte[] body = "attach reply".getBytes(StandardCharsets.UTF_8);
        int n = RdmaMessageLayout.encodeResponse(buf, RdmaMessageLayout.RESP_DATA, 4, null, 11, -12, keys, body);
        Response r = RdmaMessageLayout.decodeResponse(buf, n);
        assertEquals(RdmaMessageLayout.RESP_DATA, r.type());
        assertEquals(4, r.seq());
        assertNull(r.error());
        assertEquals(11, r.value1());
        assertEquals(-12, r.value2());
        assertEquals(keys, r.keys());
        assertArrayEquals(body, r.body());
        assertTrue(keys.get(1).covers((1L << 30) + 5, 10));
        assertTrue(!keys.get(1).covers((1L << 30) + (1 << 20) - 4, 8), "a range past the MR's end is not covered");
    }

    @Test
    void shouldCarryErrorCodeAndMessage() {
        int n = RdmaMessageLayout.encodeResponse(buf, RdmaMessageLayout.RESP_ERROR, 5, ErrorCode.ACCESS_DENIED, 0, 0,
                List.of(), RdmaMessageLayout.errorBody("region 1 is read-only for frontend 0"));
        Response r = RdmaMessageLayout.decodeResponse(buf, n);
        AsymNvmException e = r.exception();
        assertEquals(ErrorCode.ACCESS_DENIED, e.errorCode());
        assertTrue(e.getMessage().contains("remote: region 1 is read-only"), e.getMessage());
        byte[] huge = RdmaMessageLayout.errorBody("x".repeat(RdmaMessageLayout.MESSAGE_LENGTH * 2));
        assertEquals(RdmaMessageLayout.MESSAGE_LENGTH - RdmaMessageLayout.RESPONSE_HEADER_LENGTH, huge.length);
    }

    @Test
    void shouldRefuseMalformedMessagesNamingTheMismatch() {
        int n = RdmaMessageLayout.encodeRequest(buf, RdmaMessageLayout.REQ_CONTROL, 1, 0, 0, 0, 0, new byte[10], 0, 10);
        AsymNvmException shortMessage = assertThrows(AsymNvmException.class,
                () -> RdmaMessageLayout.decodeRequest(buf, n - 1));
        assertEquals(ErrorCode.MALFORMED_FRAME, shortMessage.errorCode());
        assertTrue(shortMessage.getMessage().contains("10") && shortMessage.getMessage().contains("9"),
                shortMessage.getMessage());
        assertEquals(ErrorCode.MALFORMED_FRAME, assertThrows(AsymNvmException.class,
                () -> RdmaMessageLayout.decodeRequest(buf, 8)).errorCode());

        int m = RdmaMessageLayout.encodeResponse(buf, RdmaMessageLayout.RESP_ACK, 1, null, 0, 0,
                List.of(new Key(1, Access.READ, 0, 0, 8, 1)), null);
        assertEquals(ErrorCode.MALFORMED_FRAME, assertThrows(AsymNvmException.class,
                () -> RdmaMessageLayout.decodeResponse(buf, m - 1)).errorCode());
        ByteBuffer le = buf.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        le.put(RdmaMessageLayout.RESPONSE_HEADER_LENGTH + RdmaMessageLayout.KEY_ACCESS_OFFSET, (byte) 9);
        AsymNvmException access = assertThrows(AsymNvmException.class, () -> RdmaMessageLayout.decodeResponse(buf, m));
        assertTrue(access.getMessage().contains("unknown access 9"), access.getMessage());
        le.put(RdmaMessageLayout.TYPE_OFFSET, (byte) 42);
        assertEquals(ErrorCode.MALFORMED_FRAME, assertThrows(AsymNvmException.class,
                () -> RdmaMessageLayout.decodeResponse(buf, m)).errorCode());
    }

    @Test
    void shouldRefuseOversizedPayloadsNamingTheLimit() {
        byte[] big = new byte[RdmaMessageLayout.MAX_REQUEST_PAYLOAD + 1];
        AsymNvmException e = assertThrows(AsymNvmException.class, () -> RdmaMessageLayout.encodeRequest(buf,
                RdmaMessageLayout.REQ_CONTROL, 1, 0, 0, 0, 0, big, 0, big.length));
        assertEquals(ErrorCode.BAD_REQUEST, e.errorCode());
        assertTrue(e.getMessage().contains(String.valueOf(RdmaMessageLayout.MAX_REQUEST_PAYLOAD)), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RdmaMessageLayout.encodeRequest(buf, (byte) 0, 1, 0, 0, 0,
                0, null, 0, 0));
    }
}
