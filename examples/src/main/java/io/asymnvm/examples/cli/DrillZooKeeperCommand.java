package io.asymnvm.examples.cli;

import io.asymnvm.cluster.EmbeddedZooKeeper;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code asymnvm drill-zookeeper} (hidden): the embedded ZooKeeper ({@link EmbeddedZooKeeper}) as a child process of
 * {@code drill --kill zookeeper}, so that the drill can SIGKILL it and start it again on the same data directory and
 * port (its configuration record and sessions survive in the snapshot and transaction log there). Prints
 * {@code LISTENING host:port} once it serves; stops when its standard input closes (the drill is gone).
 */
@Command(name = "drill-zookeeper", hidden = true, description = "ZooKeeper of a drill (internal).")
public final class DrillZooKeeperCommand implements Callable<Integer> {
    @Option(names = "--dir", required = true, description = "data directory (kept across restarts)")
    Path dir;

    @Option(names = "--port", required = true, description = "client port (the same on every restart)")
    int port;

    @Option(names = "--tick-ms", defaultValue = "" + EmbeddedZooKeeper.DEFAULT_TICK_MILLIS)
    int tickMillis;

    @Override
    public Integer call() throws IOException {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("--port " + port + " is outside [1, 65535]: a restart needs a fixed "
                    + "port");
        }
        try (EmbeddedZooKeeper zk = EmbeddedZooKeeper.start(dir, "127.0.0.1", port, tickMillis)) {
            System.out.println("LISTENING " + zk.connectString());
            System.out.flush();
            DrillStdin.awaitEnd();
        }
        return 0;
    }
}
