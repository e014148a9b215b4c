package io.asymnvm.cluster;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;

/**
 * A single ZooKeeper server inside this JVM ({@link ZooKeeperServerEmbedded}), the embedded default of
 * {@code ./asymnvm cluster --dir D}: one machine runs the coordination service, the backend and its mirrors. Its data
 * lives under {@code dir} (snapshots and transaction log), so a restart on the same directory and port keeps the
 * configuration record and the sessions.
 *
 * <p>The tick is small (default {@value #DEFAULT_TICK_MILLIS} ms) because ZooKeeper grants session timeouts only
 * between 2 and 20 ticks by default; this server widens the maximum to {@value #MAX_SESSION_TIMEOUT_MILLIS} ms so
 * a lease may be anything from 2 ticks up. It binds the given host (default {@code 127.0.0.1}); port 0 picks a free
 * port, and {@link #connectString()} names the port bound.
 */
public final class EmbeddedZooKeeper implements AutoCloseable {
    public static final int DEFAULT_TICK_MILLIS = 100;
    static final int MAX_SESSION_TIMEOUT_MILLIS = 60_000;
    static final long START_TIMEOUT_MILLIS = 30_000;
    static final int MAX_CLIENT_CONNECTIONS = 1024;

    private final ZooKeeperServerEmbedded server;
    private final String connectString;
    private final int port;
    private final Path dir;

    private EmbeddedZooKeeper(ZooKeeperServerEmbedded server, String connectString, int port, Path dir) {
        this.server = server;
        this.connectString = connectString;
        this.port = port;
        this.dir = dir;
    }

    /** Starts a server on 127.0.0.1, a free port, the default tick. */
    public static EmbeddedZooKeeper start(Path dir) {
        return start(dir, "127.0.0.1", 0, DEFAULT_TICK_MILLIS);
    }

    /**
     * Starts a server and waits until it serves.
     *
     * @param dir data directory (created if missing)
     * @param host address to bind
     * @param port client port, 0 for a free one
     * @param tickMillis ZooKeeper's tick; the shortest lease it grants is two ticks
     */
    public static EmbeddedZooKeeper start(Path dir, String host, int port, int tickMillis) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("ZooKeeper port out of range [0, 65535]: " + port);
        }
        if (tickMillis < 10 || tickMillis > 10_000) {
            throw new IllegalArgumentException("ZooKeeper tick out of range [10, 10000] ms: " + tickMillis);
        }
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("ZooKeeper host is blank: '" + host + "'");
        }
        Path data = dir.resolve("data");
        try {
            Files.createDirectories(data);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot create the ZooKeeper data directory " + data + ": " + e, e);
        }
        Properties p = new Properties();
        p.setProperty("tickTime", Integer.toString(tickMillis));
        p.setProperty("clientPort", Integer.toString(port));
        p.setProperty("clientPortAddress", host);
        p.setProperty("dataDir", data.toString());
        p.setProperty("maxSessionTimeout", Integer.toString(MAX_SESSION_TIMEOUT_MILLIS));
        // every node of a one-machine cluster connects from the same address: ZooKeeper's default of 60 is too few
        p.setProperty("maxClientCnxns", Integer.toString(MAX_CLIENT_CONNECTIONS));
        p.setProperty("admin.enableServer", "false");
        p.setProperty("4lw.commands.whitelist", "");
        p.setProperty("metricsProvider.exportJvmInfo", "false");
        ZooKeeperServerEmbedded server;
        try {
            server = ZooKeeperServerEmbedded.builder().baseDir(dir).configuration(p)
                    .exitHandler(ExitHandler.LOG_ONLY).build();
            server.start(START_TIMEOUT_MILLIS);
            String cs = server.getConnectionString();
            int bound = Integer.parseInt(cs.substring(cs.lastIndexOf(':') + 1));
            return new EmbeddedZooKeeper(server, host + ":" + bound, bound, dir);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new AsymNvmException(ErrorCode.TIMEOUT, "embedded ZooKeeper in " + dir + " on " + host + ":" + port
                    + " did not start within " + START_TIMEOUT_MILLIS + " ms: " + e, e);
        }
    }

    /** {@code host:port} for clients. */
    public String connectString() {
        return connectString;
    }

    /** The port bound (the one to pass to a restart on the same directory). */
    public int port() {
        return port;
    }

    public Path dir() {
        return dir;
    }

    /** Stops the server; clients see their connection drop (SUSPENDED, then LOST after their session timeout). */
    @Override
    public void close() {
        server.close();
    }
}
