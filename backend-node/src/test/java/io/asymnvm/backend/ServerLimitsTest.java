package io.asymnvm.backend;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.fabric.tcp.TcpServerLimits;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.FrameLayout;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.RootDirectoryLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;

import static io.asymnvm.backend.BackendFixture.attach;
import static io.asymnvm.backend.BackendFixture.config;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The TCP server limits of a backend: derived from its geometry, configurable, validated before binding. */
@Timeout(60)
class ServerLimitsTest {
    @TempDir
    Path dir;

    private static void assertContains(String message, String... fragments) {
        for (String f : fragments) {
            assertTrue(message.contains(f), "message '" + message + "' should contain '" + f + "'");
        }
    }

    @Test
    void largestLegalFrameIsTheLargerRingPlusTheFrameHeader() {
        int header = FrameLayout.LENGTH_FIELD_LENGTH + FrameLayout.REQUEST_HEADER_LENGTH;
        assertEquals(header + (16 << 20), ServerLimits.largestLegalFrame(4 << 20, 16 << 20));
        assertEquals(header + (1 << 20), ServerLimits.largestLegalFrame(1 << 20, 64 << 10));
        assertEquals(header + ServerLimits.CONTROL_REQUEST_ALLOWANCE, ServerLimits.largestLegalFrame(512, 1024));
        assertEquals(FrameLayout.MAX_FRAME_LENGTH, ServerLimits.largestLegalFrame(1 << 30, 1 << 30));
        // every control request defined fits the allowance
        byte[] largestCatalog = ControlMessageLayout.catalogRequest(ControlMessageLayout.KIND_CATALOG_BIND, 0,
                "n".repeat(RootDirectoryLayout.MAX_NAME_BYTES), 0, 0, 0, 0);
        assertEquals(ServerLimits.LARGEST_CATALOG_REQUEST, largestCatalog.length);
        assertTrue(largestCatalog.length <= ServerLimits.CONTROL_REQUEST_ALLOWANCE);
    }

    @Test
    void aWholeRingIsOneLegalWriteAndOneByteMoreIsOverTheDerivedLimit() {
        Path pm = dir.resolve("node.pm");
        try (BackendNode node = BackendNode.start(config(pm).port(0).conclude());
             TcpFabric fabric = new TcpFabric("127.0.0.1", node.port())) {
            FabricConnection c = fabric.connect();
            attach(node, c, 1);
            int ring = (int) BackendFixture.RING;
            c.write(RegionIds.redo(1), 0, new byte[ring], 0, ring).await();
            AsymNvmException e = assertThrows(AsymNvmException.class,
                    () -> c.write(RegionIds.redo(1), 0, new byte[ring + 1], 0, ring + 1).await());
            assertEquals(ErrorCode.LIMIT_EXCEEDED, e.errorCode(), e.getMessage());
            int limit = FrameLayout.LENGTH_FIELD_LENGTH + FrameLayout.REQUEST_HEADER_LENGTH + ring;
            assertContains(e.getMessage(), String.valueOf(limit + 1), String.valueOf(limit));
            FabricConnection again = fabric.connect();
            attach(node, again, 1);
            again.write(RegionIds.redo(1), 0, new byte[8], 0, 8).await(); // the backend keeps serving
            again.close();
        }
    }

    @Test
    void anExplicitFrameLimitBelowTheLargestLegalRequestIsRefused() {
        Path pm = dir.resolve("node.pm");
        int legal = ServerLimits.largestLegalFrame(BackendFixture.RING, BackendFixture.RING);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> config(pm)
                .serverLimits(TcpServerLimits.builder().maxFrameLength(legal - 1).build()).conclude());
        assertContains(e.getMessage(), "max frame length " + (legal - 1), String.valueOf(legal));

        // an existing image with larger rings than a new one would get: refused before binding
        BackendNode.start(config(pm).semRingCapacity(4 * BackendFixture.RING).conclude()).close();
        BackendConfiguration small = config(pm).port(0)
                .serverLimits(TcpServerLimits.builder().maxFrameLength(legal).build()).conclude();
        e = assertThrows(IllegalArgumentException.class, () -> BackendNode.start(small));
        assertContains(e.getMessage(), String.valueOf(legal),
                String.valueOf(ServerLimits.largestLegalFrame(4 * BackendFixture.RING, BackendFixture.RING)));
        BackendNode.start(config(pm).conclude()).close(); // nothing was left locked
    }

    @Test
    void shouldRejectEveryBadLimitNamingValueAndRange() {
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> TcpServerLimits.builder().eventLoopThreads(0).build()).getMessage(), "event-loop threads", ": 0");
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> TcpServerLimits.builder().maxFrameLength(10).build()).getMessage(), "max frame length", ": 10",
                String.valueOf(TcpServerLimits.MIN_FRAME_LENGTH));
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> TcpServerLimits.builder().maxFrameLength(FrameLayout.MAX_FRAME_LENGTH + 1).build())
                .getMessage(), String.valueOf(FrameLayout.MAX_FRAME_LENGTH));
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> TcpServerLimits.builder().maxConnectionsPerFrontend(0).build()).getMessage(),
                "max connections per frontend", ": 0");
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> TcpServerLimits.builder().idleTimeoutMillis(-1).build()).getMessage(), "idle timeout", ": -1");
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> TcpServerLimits.builder().writeBufferWaterMarks(1 << 20, 1 << 10).build()).getMessage(),
                "high water mark", ": 1024", "1048576");
    }

    @Test
    void derivedTotalConnectionsFollowTheFrontendCount() {
        TcpServerLimits r = TcpServerLimits.builder().maxConnectionsPerFrontend(3).build().resolve(1 << 20, 8);
        assertEquals(8 * 3 + TcpServerLimits.UNATTACHED_CONNECTION_ALLOWANCE, r.maxConnections());
        assertEquals(1 << 20, r.maxFrameLength());
        assertEquals(5, TcpServerLimits.builder().maxConnections(5).build().resolve(1 << 20, 8).maxConnections());
    }

    @Test
    void commandLineOptionsReachTheConfigurationAndBadOnesAreRefusedBeforeAnythingIsCreated() {
        BackendMain main = new BackendMain();
        new CommandLine(main).parseArgs("--pm", "x.pm", "--max-frame-length", "2m", "--max-connections", "40",
                "--max-connections-per-frontend", "2", "--idle-timeout-ms", "5000", "--write-buffer-low", "64k",
                "--write-buffer-high", "128k", "--event-loop-threads", "3", "--worker-threads", "5");
        TcpServerLimits l = main.serverLimits();
        assertEquals(2 << 20, l.maxFrameLength());
        assertEquals(40, l.maxConnections());
        assertEquals(2, l.maxConnectionsPerFrontend());
        assertEquals(5000, l.idleTimeoutMillis());
        assertEquals(64 << 10, l.writeBufferLowWaterMark());
        assertEquals(128 << 10, l.writeBufferHighWaterMark());
        assertEquals(3, l.eventLoopThreads());
        assertEquals(5, l.workerThreads());

        BackendMain defaults = new BackendMain();
        new CommandLine(defaults).parseArgs("--pm", "x.pm");
        TcpServerLimits d = defaults.serverLimits();
        assertEquals(0, d.maxFrameLength(), "auto");
        assertEquals(TcpServerLimits.DEFAULT_MAX_CONNECTIONS_PER_FRONTEND, d.maxConnectionsPerFrontend());
        assertEquals(TcpServerLimits.DEFAULT_IDLE_TIMEOUT_MILLIS, d.idleTimeoutMillis());
        assertEquals(TcpServerLimits.DEFAULT_WRITE_BUFFER_HIGH, d.writeBufferHighWaterMark());
        assertEquals(TcpServerLimits.defaultEventLoopThreads(), d.eventLoopThreads());

        Path pm = dir.resolve("refused.pm");
        CommandLine cl = new CommandLine(new BackendMain());
        java.io.StringWriter err = new java.io.StringWriter();
        cl.setErr(new java.io.PrintWriter(err));
        int code = cl.execute("--pm", pm.toString(), "--port", "0", "--write-buffer-high", "1k");
        assertEquals(1, code);
        assertContains(err.toString(), "write buffer high water mark", "1024");
        assertFalse(Files.exists(pm), "nothing is created for a refused configuration");
    }
}
