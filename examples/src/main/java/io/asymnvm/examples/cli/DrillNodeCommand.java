package io.asymnvm.examples.cli;

import io.asymnvm.backend.BackendMain;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code asymnvm drill-node} (hidden): a backend or mirror with {@code --zk} as the child of a permanent-loss
 * drill. The same {@code backend --zk} / {@code mirror --zk} commands, plus a watch on standard input: when it
 * closes, the drill that started this process is gone, and the node shuts down instead of outliving it.
 */
@Command(name = "drill-node", hidden = true, description = "Cluster node of a drill (internal).")
public final class DrillNodeCommand implements Callable<Integer> {
    @Option(names = "--role", required = true, description = "backend or mirror")
    String role;

    @Option(names = "--pm", required = true)
    String pm;

    @Option(names = "--port", required = true)
    int port;

    @Option(names = "--size", defaultValue = "256m")
    String size;

    @Option(names = "--credentials", required = true)
    String credentials;

    @Option(names = "--zk", required = true)
    String zk;

    @Option(names = "--cluster", required = true)
    String cluster;

    @Option(names = "--node-id", required = true)
    String nodeId;

    @Option(names = "--lease-ms", defaultValue = "1000")
    int leaseMillis;

    @Override
    public Integer call() {
        DrillStdin.exitAtEnd("drill-node-stdin"); // System.exit runs the node's shutdown hook: a clean close
        List<String> args = new ArrayList<>(List.of("--pm", pm, "--port", Integer.toString(port), "--credentials",
                credentials, "--zk", zk, "--cluster", cluster, "--node-id", nodeId, "--lease-ms",
                Integer.toString(leaseMillis)));
        Object command;
        if ("backend".equals(role)) {
            args.addAll(List.of("--size", size));
            command = new BackendMain();
        } else if ("mirror".equals(role)) {
            command = new MirrorCommand();
        } else {
            throw new IllegalArgumentException("--role must be backend or mirror: '" + role + "'");
        }
        CommandLine cl = new CommandLine(command);
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            cmd.getErr().println("asymnvm drill-node: " + AsymNvmCli.oneLine(ex));
            return 1;
        });
        return cl.execute(args.toArray(String[]::new));
    }
}
