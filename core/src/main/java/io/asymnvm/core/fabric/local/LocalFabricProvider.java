package io.asymnvm.core.fabric.local;

import io.asymnvm.core.fabric.EmbeddedBackend;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.FabricProvider;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

/**
 * The {@code local} fabric provider: opens an embedded backend (option {@code dir}, the PM image directory, and
 * optional {@code size} in bytes) in this JVM; the fabric owns it and closes it on {@link Fabric#close()}. Host and
 * port are ignored. Available wherever the backend module is on the class path.
 */
public final class LocalFabricProvider implements FabricProvider {
    /** Default embedded image size when {@code size} is not given. */
    public static final long DEFAULT_SIZE = 256L << 20;
    private static final Set<String> OPTIONS = Set.of("dir", "size");

    @Override
    public String name() {
        return "local";
    }

    @Override
    public Availability availability() {
        try {
            EmbeddedBackend.factory();
            return Availability.yes();
        } catch (IllegalStateException e) {
            return Availability.no(e.getMessage());
        }
    }

    @Override
    public Fabric open(String host, int port, Map<String, String> options) {
        for (String k : options.keySet()) {
            if (!OPTIONS.contains(k)) {
                throw new IllegalArgumentException("unknown option of the local fabric: " + k + " (known: " + OPTIONS
                        + ")");
            }
        }
        String dir = options.get("dir");
        if (dir == null || dir.isBlank()) {
            throw new IllegalArgumentException("the local fabric needs option 'dir' (the PM image directory)");
        }
        long size = DEFAULT_SIZE;
        if (options.containsKey("size")) {
            try {
                size = Long.parseLong(options.get("size"));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("local fabric option size is not a number: " + options.get("size"));
            }
            if (size <= 0) {
                throw new IllegalArgumentException("local fabric option size must be positive: " + size);
            }
        }
        EmbeddedBackend backend = EmbeddedBackend.factory().open(Path.of(dir), size);
        return new Fabric() {
            @Override
            public String name() {
                return "local";
            }

            @Override
            public FabricConnection connect() {
                return backend.fabric().connect();
            }

            @Override
            public void close() {
                backend.close();
            }
        };
    }
}
