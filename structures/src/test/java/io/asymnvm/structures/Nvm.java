package io.asymnvm.structures;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;

import java.nio.file.Path;

/**
 * A frontend for structure tests over the {@code local} fabric (an embedded backend on a directory) or over TCP
 * (a {@link BackendNode} started in this JVM on port 0). {@link #reopen()} closes everything cleanly and attaches
 * a fresh frontend to the same PM image (for TCP through a freshly started backend on the same file).
 */
final class Nvm implements AutoCloseable {
    /** How the frontend reaches its backend. */
    enum Transport { LOCAL, TCP }

    static final long PM_SIZE = 256L << 20;

    private final Path dir;
    private final Transport transport;
    private final FrontendOptions options;
    private BackendNode node;
    private AsymNvm nvm;

    private Nvm(Path dir, Transport transport, FrontendOptions options) {
        this.dir = dir;
        this.transport = transport;
        this.options = options;
        open();
    }

    static Nvm start(Path dir, Transport transport) {
        return new Nvm(dir, transport, FrontendOptions.builder().embeddedSizeBytes(PM_SIZE).conclude());
    }

    static Nvm start(Path dir, Transport transport, FrontendOptions options) {
        return new Nvm(dir, transport, options);
    }

    private void open() {
        if (transport == Transport.LOCAL) {
            nvm = AsymNvm.embedded(dir, options);
            return;
        }
        node = BackendNode.start(BackendConfiguration.builder(dir.resolve("backend.pm")).port(0)
                .size(Math.max(PM_SIZE, options.embeddedSizeBytes())).conclude());
        try {
            nvm = AsymNvm.connect("127.0.0.1", node.port(), 0, options.withCredentials(node.credentialsFile()));
        } catch (RuntimeException e) {
            node.close();
            throw e;
        }
    }

    AsymNvm nvm() {
        return nvm;
    }

    Transport transport() {
        return transport;
    }

    /** Closes the frontend (and a TCP backend) cleanly and opens new ones on the same PM image. */
    void reopen() {
        close();
        open();
    }

    @Override
    public void close() {
        try {
            if (nvm != null) {
                nvm.close();
            }
        } finally {
            nvm = null;
            if (node != null) {
                node.close();
                node = null;
            }
        }
    }
}
