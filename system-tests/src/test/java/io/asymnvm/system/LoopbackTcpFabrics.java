package io.asymnvm.system;

import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.tcp.TcpFabric;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The client side of one power-failure run over loopback tcp: a {@link TcpFabric} to whichever backend node serves
 * now (a restarted node listens on a new ephemeral port, so each port gets its own fabric), every connection
 * handed out remembered. {@link #closeAndCheck} tears the client side down after the power failure (or the clean
 * close) and reports what survived that should not have: a connection still open, or a port still accepting
 * (the node's emulated NIC must have gone with the power).
 *
 * <p>Not thread-safe beyond {@link #fabricTo}, which the frontend's threads may call concurrently.
 */
final class LoopbackTcpFabrics {
    static final String HOST = "127.0.0.1";

    private final Map<Integer, TcpFabric> fabrics = new LinkedHashMap<>();
    private final List<FabricConnection> connections = new ArrayList<>();

    /** The tcp fabric to {@code node}'s emulated NIC; its connections are tracked. */
    synchronized Fabric fabricTo(BackendNode node) {
        int port = node.port();
        if (port < 0) {
            throw new IllegalStateException("backend node has no tcp listener: " + node.configuration().pmFile());
        }
        TcpFabric tcp = fabrics.computeIfAbsent(port, p -> new TcpFabric(HOST, p));
        return new Fabric() {
            @Override
            public String name() {
                return tcp.name();
            }

            @Override
            public FabricConnection connect() {
                FabricConnection c = tcp.connect();
                synchronized (LoopbackTcpFabrics.this) {
                    connections.add(c);
                }
                return c;
            }

            @Override
            public void close() {
                // closed with the run
            }
        };
    }

    /** Connections handed out so far. */
    synchronized int connections() {
        return connections.size();
    }

    /** The ports connected to so far, in order. */
    synchronized List<Integer> ports() {
        return List.copyOf(fabrics.keySet());
    }

    /**
     * Closes every fabric (their event loops stop; open connections fail with {@code CONNECTION_LOST}), then
     * requires every connection closed and every port refusing connections. Null if so, else what survived.
     */
    synchronized String closeAndCheck() {
        fabrics.values().forEach(TcpFabric::close);
        long open = connections.stream().filter(FabricConnection::isOpen).count();
        if (open > 0) {
            return open + " of " + connections.size() + " tcp connections still open after the fabrics closed";
        }
        for (int port : fabrics.keySet()) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(HOST, port), 1_000);
                return "port " + port + " still accepts connections after the backend went down";
            } catch (ConnectException refused) {
                // the emulated NIC is gone
            } catch (IOException e) {
                return "probing port " + port + " failed: " + e;
            }
        }
        return null;
    }
}
