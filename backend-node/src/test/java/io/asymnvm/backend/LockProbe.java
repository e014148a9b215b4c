package io.asymnvm.backend;

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Run in a child JVM: tries the exclusive lock a backend holds on its PM image's lock file and prints
 * {@code LOCKED} (another process holds it) or {@code FREE}. Lets a test see the OS-level lock, which a lock
 * attempt inside the holder's own JVM cannot.
 */
public final class LockProbe {
    private LockProbe() {
    }

    public static void main(String[] args) throws Exception {
        try (FileChannel ch = FileChannel.open(Path.of(args[0]), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            FileLock lock = ch.tryLock();
            System.out.println(lock == null ? "LOCKED" : "FREE");
        }
    }
}
