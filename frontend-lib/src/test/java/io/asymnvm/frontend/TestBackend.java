package io.asymnvm.frontend;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;

import java.nio.file.Path;
import java.util.function.UnaryOperator;

/**
 * A backend node started in this JVM for frontend tests, reachable over the {@code local} fabric or over TCP
 * (loopback, port chosen by the OS unless pinned). {@link #restart()} closes the node and starts a new one on
 * the same PM file and the same port, as a backend process restart would.
 */
final class TestBackend implements AutoCloseable {
    /** How a test frontend reaches the node. */
    enum Transport { LOCAL, TCP }

    static final long SIZE = 256L << 20;

    private final Path file;
    private final Transport transport;
    private final UnaryOperator<BackendConfiguration.Builder> tuning;
    private BackendNode node;

    private TestBackend(Path file, Transport transport, UnaryOperator<BackendConfiguration.Builder> tuning) {
        this.file = file;
        this.transport = transport;
        this.tuning = tuning;
        this.node = BackendNode.start(configuration(transport == Transport.TCP ? 0 : -1));
    }

    static TestBackend start(Path dir, Transport transport) {
        return start(dir, transport, UnaryOperator.identity());
    }

    static TestBackend start(Path dir, Transport transport, UnaryOperator<BackendConfiguration.Builder> tuning) {
        return new TestBackend(dir.resolve("backend.pm"), transport, tuning);
    }

    private BackendConfiguration configuration(int port) {
        return tuning.apply(BackendConfiguration.builder(file).size(SIZE).port(port)).conclude();
    }

    BackendNode node() {
        return node;
    }

    Transport transport() {
        return transport;
    }

    /** A new frontend {@code frontendId} attached to this node over the test's transport. */
    AsymNvm open(int frontendId, FrontendOptions options) {
        return transport == Transport.TCP
                ? AsymNvm.connect("127.0.0.1", node.port(), frontendId, options.withCredentials(node.credentialsFile()))
                : AsymNvm.open(node.localFabric(), frontendId, options);
    }

    /** Heap bytes of the node (every slab). */
    long heapSize() {
        return node.superblock().slabCount() * node.superblock().slabSize();
    }

    /** Stops the node (clean close); a frontend sees its connection drop. */
    void stop() {
        node.close();
    }

    /** Starts a new node on the same file and, for TCP, the same port as the previous one. */
    void startAgain(int port) {
        node = BackendNode.start(configuration(transport == Transport.TCP ? port : -1));
    }

    /** Closes the node and starts a new one on the same file and port. */
    void restart() {
        int port = node.port();
        stop();
        startAgain(port);
    }

    @Override
    public void close() {
        node.close();
    }
}
