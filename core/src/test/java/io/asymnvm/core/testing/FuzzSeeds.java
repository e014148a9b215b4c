package io.asymnvm.core.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The seeds of the fuzz tests ({@code @FuzzTest}) and how long each fuzzes. A fuzz test's committed inputs live in
 * {@code src/test/resources/<package>/<TestClass>Inputs/<method>/}: Jazzer replays every file there in the normal
 * build (regression mode) and starts from them when fuzzing ({@code JAZZER_FUZZ=1}, profiles {@code fuzz} and
 * {@code slow}). Each fuzz test class generates its seeds in code; {@link #check} verifies that the committed
 * files are what the generator makes, and writes them when run with {@code -Dasymnvm.writeFuzzSeeds=true}. Inputs
 * that made a fuzzer fail are committed beside the seeds as {@code crash-*} files and stay as regressions.
 */
public final class FuzzSeeds {
    /** How long each fuzz test fuzzes (Jazzer's {@code maxDuration}); each target runs in its own JVM. */
    public static final String MAX_DURATION = "45s";

    private FuzzSeeds() {
    }

    /** A scratch directory for a fuzz test class's files (under the build's temp directory). */
    public static Path scratch(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Deletes a {@link #scratch} directory and the files in it. */
    public static void removeScratch(Path dir) {
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The source directory of a fuzz test method's inputs (the tests run in the module directory). */
    public static Path inputs(Class<?> test, String method) {
        return Path.of("src", "test", "resources").resolve(test.getPackageName().replace('.', '/'))
                .resolve(test.getSimpleName() + "Inputs").resolve(method);
    }

    /** Asserts that every seed is committed with the generator's bytes (or writes them, see the class comment). */
    public static void check(Class<?> test, String method, Map<String, byte[]> seeds) {
        Path dir = inputs(test, method);
        boolean write = Boolean.getBoolean("asymnvm.writeFuzzSeeds");
        try {
            if (write) {
                Files.createDirectories(dir);
            }
            for (Map.Entry<String, byte[]> s : seeds.entrySet()) {
                Path file = dir.resolve("seed-" + s.getKey());
                if (write) {
                    Files.write(file, s.getValue());
                }
                assertTrue(Files.isRegularFile(file), "seed " + file + " is not committed (run the test with "
                        + "-Dasymnvm.writeFuzzSeeds=true)");
                assertArrayEquals(s.getValue(), Files.readAllBytes(file), "seed " + file + " differs from its "
                        + "generator (run the test with -Dasymnvm.writeFuzzSeeds=true)");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
