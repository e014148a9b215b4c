package io.asymnvm.backend.control;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.auth.FrontendCredentials;
import io.asymnvm.core.fabric.NicSession;
import io.asymnvm.core.layout.ControlMessageLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Refusals are counted exactly and logged at a bounded rate (a hostile peer cannot flood the log). */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AttachAuthenticatorTest {
    @TempDir
    Path dir;

    @Test
    void shouldCountEveryRefusalButLogAtMostOneLinePerSecondPerKind() {
        List<String> lines = new ArrayList<>();
        AtomicLong clock = new AtomicLong();
        AttachAuthenticator auth = new AttachAuthenticator(
                FrontendCredentials.createIfAbsent(dir.resolve("node.credentials"), 4), (l, t) -> lines.add(l),
                clock::get);
        NicSession session = new NicSession();
        for (int i = 0; i < 10_000; i++) {
            AsymNvmException e = assertThrows(AsymNvmException.class,
                    () -> auth.checkControl(session, ControlMessageLayout.KIND_GRANT_SLAB));
            assertEquals(ErrorCode.AUTH_REQUIRED, e.errorCode());
            if (i % 1_000 == 999) {
                clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(100)); // 10,000 refusals in one second
            }
        }
        assertEquals(10_000, auth.refusals(), "the counter is exact");
        assertEquals(1, lines.size(), "lines logged for 10,000 refusals in one second: " + lines);
        System.out.println("10,000 refusals in 1 s (test clock): " + lines.size() + " WARN lines");

        AsymNvmException failed = assertThrows(AsymNvmException.class,
                () -> auth.verifyAttach(session, 1, 0, new byte[32]));
        assertEquals(ErrorCode.AUTH_FAILED, failed.errorCode());
        assertEquals(lines.size(), lines.stream().filter(l -> l.contains("AUTH_")).count());
        assertTrue(lines.get(lines.size() - 1).contains("AUTH_FAILED"), "another kind has its own limit: " + lines);

        clock.addAndGet(TimeUnit.SECONDS.toNanos(1));
        assertThrows(AsymNvmException.class, () -> auth.checkControl(session, ControlMessageLayout.KIND_GRANT_SLAB));
        String last = lines.get(lines.size() - 1);
        assertTrue(last.contains("AUTH_REQUIRED") && last.contains("more like this suppressed")
                && last.contains("10002 refusals so far"), last);
        assertEquals(10_002, auth.refusals());
    }
}
