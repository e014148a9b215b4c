package io.asymnvm.frontend;

import io.asymnvm.backend.log.FrontendLog;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.recovery.log.RingScanner;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A running frontend whose semantic ring is found damaged (quarantined) stops for good at its first refused FLUSH:
 * every later call fails with {@code RING_CORRUPT} naming ring and offset, its background agent stops, nothing is
 * retried, and the application can still close it. Every other frontend keeps being served.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class QuarantinedEngineTest {
    private static final FrontendOptions LAZY_REDO = FrontendOptions.builder()
            .redoBatch(1 << 20, 16 << 20, 10_000_000).conclude();

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void shouldStopTheEngineAtTheFirstFlushRefusedAsRingCorrupt() throws Exception {
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.TCP)) {
            AsymNvm victim = backend.open(1, LAZY_REDO);
            Cells v = victim.transactional(Cells.class, new Cells.Impl());
            v.create(8);
            victim.sync();
            for (int i = 0; i < 4; i++) {
                v.set(i, 100 + i); // durable semantic records whose redo stays in the frontend
            }
            FrontendLog log = backend.node().frontendLog(1);
            List<Long> positions = new ArrayList<>();
            RingScanner.scan(log.semanticReader(), log.checkpoint().semHead(), 0, e -> positions.add(e.position()));
            long damagedAt = log.semanticReader().offsetOf(positions.get(1));
            flipByte(dir.resolve("backend.pm"), damagedAt + SemanticRecordLayout.HEADER_LENGTH);
            // the backend finds the damage as an attach would (while the victim runs): it quarantines frontend 1
            AsymNvmException found = assertThrows(AsymNvmException.class, log::scanSemantic);
            assertEquals(ErrorCode.RING_CORRUPT, found.errorCode(), found.getMessage());
            assertNotNull(log.quarantine());

            long flushesBefore = victim.counters().flushes();
            v.setAsync(5, 5); // not awaited: the background agent posts its FLUSH, which is refused
            Thread agent = agentOf(1);
            agent.join(TimeUnit.SECONDS.toMillis(20));
            assertFalse(agent.isAlive(), "the agent stops at the refused FLUSH instead of retrying it");
            long flushes = victim.counters().flushes();
            assertTrue(flushes - flushesBefore <= 2, "FLUSHes posted after the quarantine: " + (flushes - flushesBefore));

            for (Executable call : List.<Executable>of(() -> v.set(6, 6), () -> v.setAsync(6, 6), () -> v.get(0),
                    victim::sync)) {
                AsymNvmException e = assertThrows(AsymNvmException.class, call);
                assertEquals(ErrorCode.RING_CORRUPT, e.errorCode(), e.getMessage());
                assertTrue(e.getMessage().contains("semantic ring of frontend 1")
                        && e.getMessage().contains("offset " + damagedAt), e.getMessage());
            }
            assertEquals(flushes, victim.counters().flushes(), "no FLUSH posted once the engine stopped");
            victim.close(); // the application can close it: no sync, no detach

            try (AsymNvm other = backend.open(2, FrontendOptions.defaults())) {
                Cells o = other.transactional(Cells.class, new Cells.Impl());
                o.create(2);
                o.set(1, 9);
                assertArrayEquals(new long[] {0, 9}, o.snapshot());
            }
        }
    }

    private static Thread agentOf(int frontendId) {
        String name = "asymnvm-frontend-" + frontendId;
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no thread " + name));
    }

    private static void flipByte(Path file, long offset) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(offset);
            int b = f.read();
            f.seek(offset);
            f.write(b ^ 0x5A);
        }
    }
}
