package io.asymnvm.examples.cli;

import io.asymnvm.examples.drill.DrillWorker;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;

/**
 * {@code asymnvm drill-worker} (hidden): the frontend process of {@code asymnvm drill}; see {@link DrillWorker}
 * for what it prints. Writes its protocol lines to the process's standard output directly, and any failure as one
 * {@code ERROR} line there too (exit 1), so the drill sees it in order.
 */
@Command(name = "drill-worker", hidden = true, description = "Frontend worker of a drill (internal).")
public final class DrillWorkerCommand implements Callable<Integer> {
    @Option(names = "--host", defaultValue = "127.0.0.1")
    String host;

    @Option(names = "--port", defaultValue = "0")
    int port;

    @Option(names = "--frontend-id", defaultValue = "0")
    int frontendId;

    @Option(names = "--accounts", required = true)
    int accounts;

    @Option(names = "--initial-balance", defaultValue = "1000")
    long initialBalance;

    @Option(names = "--seed", required = true)
    long seed;

    @Option(names = "--verify-only")
    boolean verifyOnly;

    @Option(names = "--reconnect-timeout-ms", defaultValue = "60000")
    long reconnectTimeoutMillis;

    @Option(names = "--redo-batch", defaultValue = "128")
    int redoBatch;

    @Option(names = "--redo-delay-us", defaultValue = "100000")
    long redoDelayMicros;

    @Option(names = "--credentials")
    java.nio.file.Path credentials;

    @Option(names = "--zk")
    String zk;

    @Override
    public Integer call() {
        DrillWorker worker = new DrillWorker(host, port, frontendId, accounts, initialBalance, seed, verifyOnly,
                reconnectTimeoutMillis, redoBatch, redoDelayMicros, credentials, zk);
        try {
            return worker.run(System.out, System.in);
        } catch (RuntimeException e) {
            System.out.print("ERROR " + AsymNvmCli.oneLine(e) + "\n");
            System.out.flush();
            e.printStackTrace();
            return 1;
        }
    }
}
