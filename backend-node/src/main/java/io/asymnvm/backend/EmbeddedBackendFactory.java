package io.asymnvm.backend;

import io.asymnvm.core.fabric.EmbeddedBackend;
import io.asymnvm.core.fabric.Fabric;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Service implementation behind {@code AsymNvm.embedded(dir)}: a backend in the caller's JVM, no TCP listener. */
public final class EmbeddedBackendFactory implements EmbeddedBackend.Factory {
    /** File name of the PM image inside the embedded directory. */
    public static final String PM_FILE = "backend.pm";

    @Override
    public EmbeddedBackend open(Path directory, long sizeBytes) {
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + directory, e);
        }
        BackendNode node = BackendNode.start(BackendConfiguration.builder(directory.resolve(PM_FILE))
                .size(sizeBytes).conclude());
        return new EmbeddedBackend() {
            @Override
            public Fabric fabric() {
                return node.localFabric();
            }

            @Override
            public void awaitReplayed() {
                node.awaitReplayed();
            }

            @Override
            public void close() {
                node.close();
            }
        };
    }
}
