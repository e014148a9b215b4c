package io.asymnvm.examples.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Fresh directories for throw-away PM images. They go under {@code /dev/shm} when it exists (tmpfs: PM speed,
 * see DESIGN §8), else under {@code java.io.tmpdir}.
 */
public final class ScratchDirectory {
    private static final Path SHM = Path.of("/dev/shm");

    private ScratchDirectory() {
    }

    /** Where scratch directories are created. */
    public static Path base() {
        return Files.isDirectory(SHM) && Files.isWritable(SHM) ? SHM : Path.of(System.getProperty("java.io.tmpdir"));
    }

    /** Creates a new empty directory named {@code prefix} followed by a random suffix. */
    public static Path create(String prefix) {
        Path base = base();
        try {
            return Files.createTempDirectory(base, prefix);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a scratch directory in " + base, e);
        }
    }

    /** Creates a new empty directory named {@code prefix} and a random suffix inside {@code parent}. */
    public static Path createIn(Path parent, String prefix) {
        try {
            return Files.createTempDirectory(parent, prefix);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a scratch directory in " + parent, e);
        }
    }

    /** Deletes {@code dir} and everything below it; a missing directory is not an error. */
    public static void delete(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException failure) throws IOException {
                    if (failure != null && !(failure instanceof NoSuchFileException)) {
                        throw failure;
                    }
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete scratch directory " + dir, e);
        }
    }
}
