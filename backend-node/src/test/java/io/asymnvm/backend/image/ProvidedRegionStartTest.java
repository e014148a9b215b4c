package io.asymnvm.backend.image;

import io.asymnvm.backend.BackendFixture;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.region.ByteArrayRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A backend over a region the caller provides (simulated PM in the crash tests) has no mark file to tell how the
 * previous run ended: a blank region has had none, anything else is started as after a crash, so that a torn redo
 * tail is excused as what a crash leaves (FrontendLog#crashTail) instead of quarantining the frontend.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ProvidedRegionStartTest {
    @TempDir
    Path dir;

    @Test
    void aBlankRegionStartsCleanAndAUsedOneAsAfterACrash() {
        ByteArrayRegion region = new ByteArrayRegion("pm", (int) BackendFixture.SIZE);
        try (BackendNode node = BackendNode.start(BackendFixture.config(dir.resolve("p.pm")).conclude(), region)) {
            assertTrue(node.previousShutdownClean(), "a freshly formatted region has no previous run");
        }
        try (BackendNode node = BackendNode.start(BackendFixture.config(dir.resolve("p.pm")).conclude(), region)) {
            assertFalse(node.previousShutdownClean(), "a used region without a mark file: treated as unclean");
        }
    }
}
