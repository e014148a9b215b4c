package io.asymnvm.examples;

import io.asymnvm.examples.support.ScratchDirectory;
import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDirFactory;

import java.nio.file.Path;

/**
 * {@code @TempDir(factory = ShmTempDirFactory.class)}: temp directories on {@code /dev/shm} when present, where a
 * persist costs under a microsecond instead of an msync to disk (DESIGN §8). JUnit deletes them afterwards.
 */
public final class ShmTempDirFactory implements TempDirFactory {
    @Override
    public Path createTempDirectory(AnnotatedElementContext element, ExtensionContext context) {
        return ScratchDirectory.create("asymnvm-test-");
    }
}
