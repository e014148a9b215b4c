package io.asymnvm.core.fabric;

import java.nio.file.Path;
import java.util.ServiceLoader;

/**
 * A memory node running inside the caller's JVM, reached through the {@code local} fabric. Frontends find the
 * implementation through {@link ServiceLoader}, so the client library does not depend on the backend module.
 */
public interface EmbeddedBackend extends AutoCloseable {

    /** The fabric that reaches this node in-process. */
    Fabric fabric();

    /** Waits until every redo batch written so far has been replayed (for tests and clean shutdown). */
    void awaitReplayed();

    @Override
    void close();

    /** Creates embedded backends; registered as a service by the backend module. */
    interface Factory {
        /** Opens (or formats, if absent) a PM image of {@code sizeBytes} in {@code directory}. */
        EmbeddedBackend open(Path directory, long sizeBytes);
    }

    /** Loads the factory or explains what is missing from the class path. */
    static Factory factory() {
        return ServiceLoader.load(Factory.class).findFirst().orElseThrow(() -> new IllegalStateException(
                "no embedded backend on the class path: add the asymnvm-backend-node module"));
    }
}
