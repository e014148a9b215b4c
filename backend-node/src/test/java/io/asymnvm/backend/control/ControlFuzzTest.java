package io.asymnvm.backend.control;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.asymnvm.backend.BackendFixture;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.testing.FuzzSeeds;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Fuzzes the backend's control plane ({@link BackendControlHandler#handle}) with arbitrary request bytes against a
 * real small backend (the 1 MiB {@link BackendFixture} image), through the local fabric, so a request takes the
 * path a TCP control frame's payload takes.
 *
 * <p>Input: {@code flags(1)}, then up to {@value #MAX_REQUESTS} requests, each {@code length(1)} and that many
 * bytes (a length of 255 takes the rest). Flag bit 0 attaches the session as frontend 1 first (so the fuzzer
 * reaches the calls that need an attached session); all requests go over one connection.
 *
 * <p>Contract: every call answers or fails with a typed code other than {@code UNKNOWN} (an untyped exception in
 * the handler becomes {@code UNKNOWN} on the way out); a session that has not attached changes nothing in the
 * image with any request but an ATTACH; the backend keeps serving (a fresh connection's PING answers).
 */
class ControlFuzzTest {
    static final int MAX_REQUESTS = 4;
    private static final int FLAG_ATTACH_FIRST = 1;
    private static final int FUZZED_FRONTEND = 1;

    private static Path dir;
    private static Path pm;
    private static BackendNode node;

    @BeforeAll
    static void startBackend() {
        dir = FuzzSeeds.scratch("control-fuzz");
        pm = dir.resolve("control-fuzz.pm");
        node = BackendFixture.start(pm);
    }

    @AfterAll
    static void stopBackend() {
        if (node != null) {
            node.close();
        }
        FuzzSeeds.removeScratch(dir);
    }

    @FuzzTest(maxDuration = FuzzSeeds.MAX_DURATION)
    void fuzzControl(byte[] input) {
        if (input.length == 0) {
            return;
        }
        boolean attachFirst = (input[0] & FLAG_ATTACH_FIRST) != 0;
        List<byte[]> requests = split(input);
        try (FabricConnection c = node.localFabric().connect()) {
            boolean attached = false;
            if (attachFirst) {
                outcome(c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, FUZZED_FRONTEND, 0)));
                attached = true;
            }
            for (byte[] request : requests) {
                boolean isAttach = request.length >= 4
                        && ControlMessageLayout.wrap(request).getInt(0) == ControlMessageLayout.KIND_ATTACH;
                byte[] before = attached || isAttach ? null : image();
                ErrorCode code = outcome(c.call(request));
                if (before != null) {
                    assertTrue(code != null || answeredBeforeAttach(request),
                            "an unattached session's request was served: " + Arrays.toString(request));
                    assertArrayEquals(before, image(), "an unattached session changed the image");
                }
                attached |= isAttach && code == null;
            }
        }
        try (FabricConnection probe = node.localFabric().connect()) {
            assertEquals(0, probe.call(ControlMessageLayout.request(ControlMessageLayout.KIND_PING, 0, 0)).await()
                    .bytes().length, "the backend stopped serving");
        }
    }

    /** The read-only calls a session may make before it attaches: ping, a challenge nonce, status. */
    private static boolean answeredBeforeAttach(byte[] request) {
        if (request.length < 4) {
            return false;
        }
        int kind = ControlMessageLayout.wrap(request).getInt(0);
        return kind == ControlMessageLayout.KIND_PING || kind == ControlMessageLayout.KIND_CHALLENGE
                || kind == ControlMessageLayout.KIND_STATUS;
    }

    /** Null when the call succeeded, else its typed code (never UNKNOWN). */
    private static ErrorCode outcome(Completion c) {
        try {
            c.await();
            return null;
        } catch (AsymNvmException e) {
            if (e.errorCode() == ErrorCode.UNKNOWN) {
                fail("untyped failure escaped the control plane: " + e.getMessage(), e.getCause() != null
                        ? e.getCause() : e);
            }
            assertNotEquals(null, e.detail());
            return e.errorCode();
        }
    }

    private static byte[] image() {
        return BackendFixture.readFile(pm, 0, (int) BackendFixture.SIZE);
    }

    static List<byte[]> split(byte[] input) {
        List<byte[]> out = new ArrayList<>();
        int at = 1;
        while (at < input.length && out.size() < MAX_REQUESTS) {
            int n = input[at++] & 0xFF;
            int end = n == 255 ? input.length : Math.min(input.length, at + n);
            out.add(Arrays.copyOfRange(input, at, end));
            at = end;
        }
        return out;
    }

    /** Seeds: the calls a frontend makes, attached and not, in a few orders. */
    static Map<String, byte[]> seeds() {
        Map<String, byte[]> s = new LinkedHashMap<>();
        byte[] attach = ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, FUZZED_FRONTEND, 0);
        byte[] grant = ControlMessageLayout.request(ControlMessageLayout.KIND_GRANT_SLAB, 0, 0);
        byte[] ping = ControlMessageLayout.request(ControlMessageLayout.KIND_PING, 0, 0);
        byte[] detach = ControlMessageLayout.request(ControlMessageLayout.KIND_DETACH, 0, 0);
        byte[] lookup = ControlMessageLayout.catalogRequest(ControlMessageLayout.KIND_CATALOG_LOOKUP, 0, "accounts",
                0, 0, 0, 0);
        byte[] bind = ControlMessageLayout.catalogRequest(ControlMessageLayout.KIND_CATALOG_BIND, 0, "fuzzed-root",
                1, 2, 3, 0);
        byte[] reattach = ControlMessageLayout.reattachRequest(FUZZED_FRONTEND, 3, new java.util.UUID(1, 2));
        s.put("unattached", input(0, ping, grant, lookup, detach));
        s.put("attach-grant-detach", input(0, attach, grant, lookup, detach));
        s.put("attached-catalog", input(FLAG_ATTACH_FIRST, bind, lookup, ping));
        s.put("reattach-other-image", input(0, reattach, ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH,
                7, 0), new byte[] {1, 2, 3}));
        return s;
    }

    private static byte[] input(int flags, byte[]... requests) {
        ByteBuffer b = ByteBuffer.allocate(1 + Arrays.stream(requests).mapToInt(r -> 1 + r.length).sum())
                .order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) flags);
        for (byte[] r : requests) {
            b.put((byte) r.length).put(r);
        }
        return b.array();
    }

    @Test
    void committedSeedsMatchTheirGenerator() {
        FuzzSeeds.check(getClass(), "fuzzControl", seeds());
    }
}
