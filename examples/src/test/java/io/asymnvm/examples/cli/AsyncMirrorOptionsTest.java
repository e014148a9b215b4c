package io.asymnvm.examples.cli;

import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ASYNC mirrors' options (issue 9): {@code backend --async-max-lag-ms/--async-max-lag-tx} are validated with the
 * rest of the configuration, before anything exists, and {@code mirror --mode} takes sync or async only.
 */
@Timeout(60)
class AsyncMirrorOptionsTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static int run(StringWriter err, String... args) {
        return CliFixture.executeAsMain(new StringWriter(), err, args);
    }

    @Test
    void shouldRefuseLagBoundsOutOfRangeBeforeCreatingTheImage() {
        Path pm = dir.resolve("lag.pm");
        StringWriter err = new StringWriter();
        assertEquals(1, run(err, "backend", "--pm", pm.toString(), "--port", "0", "--async-max-lag-ms", "0"));
        assertTrue(err.toString().contains("--async-max-lag-ms") && err.toString().contains("[1, 3600000]: 0"),
                err.toString());
        StringWriter err2 = new StringWriter();
        assertEquals(1, run(err2, "backend", "--pm", pm.toString(), "--port", "0", "--async-max-lag-tx", "-5"));
        assertTrue(err2.toString().contains("--async-max-lag-tx") && err2.toString().contains(": -5"),
                err2.toString());
        assertFalse(Files.exists(pm), "nothing was created");
    }

    @Test
    void shouldTakeSyncOrAsyncAsMirrorModeAndRefuseAnythingElse() {
        MirrorCommand sync = new MirrorCommand();
        new CommandLine(sync).parseArgs("--pm", "m.pm", "--backend", "127.0.0.1:7000");
        assertEquals(io.asymnvm.cluster.ReplicationMode.SYNC, sync.mode, "the default");
        MirrorCommand async = new MirrorCommand();
        new CommandLine(async).parseArgs("--pm", "m.pm", "--backend", "127.0.0.1:7000", "--mode", "ASYNC");
        assertEquals(io.asymnvm.cluster.ReplicationMode.ASYNC, async.mode);
        Path pm = dir.resolve("mirror.pm");
        StringWriter err = new StringWriter();
        assertEquals(2, run(err, "mirror", "--pm", pm.toString(), "--backend", "127.0.0.1:1", "--mode", "semi"));
        assertTrue(err.toString().contains("--mode semi is not a replication mode: sync or async"), err.toString());
        assertFalse(Files.exists(pm), "nothing was created");
    }
}
