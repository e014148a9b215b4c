package io.asymnvm.examples.cli;

import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code asymnvm backend --slab-quota}: validated with the rest of the configuration, before anything exists. */
@Timeout(60)
class SlabQuotaOptionTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void shouldRefuseANegativeQuotaBeforeCreatingTheImage() {
        Path pm = dir.resolve("quota.pm");
        StringWriter err = new StringWriter();
        int code = CliFixture.executeAsMain(new StringWriter(), err, "backend", "--pm", pm.toString(), "--port", "0",
                "--slab-quota", "-1");
        assertEquals(1, code, err.toString());
        assertTrue(err.toString().contains("slab quota") && err.toString().contains("-1"), err.toString());
        assertFalse(Files.exists(pm), "nothing was created");
    }
}
