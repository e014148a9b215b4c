package io.asymnvm.examples.cli;

import io.asymnvm.backend.BackendMain;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;

/**
 * {@code asymnvm drill-backend} (hidden): {@code asymnvm backend} as a drill's child. The same {@link BackendMain}
 * (LISTENING line, clean shutdown on SIGTERM), plus a watch on standard input: when it closes, the drill that
 * started this process is gone, and the backend shuts down cleanly instead of outliving it.
 */
@Command(name = "drill-backend", hidden = true, description = "Backend of a drill (internal).")
public final class DrillBackendCommand implements Callable<Integer> {
    @Option(names = "--pm", required = true)
    String pm;

    @Option(names = "--port", required = true)
    int port;

    @Option(names = "--size", defaultValue = "256m")
    String size;

    @Option(names = "--credentials")
    String credentials;

    @Override
    public Integer call() {
        DrillStdin.exitAtEnd("drill-backend-stdin"); // System.exit runs the node's shutdown hook: a clean close
        CommandLine backend = new CommandLine(new BackendMain());
        backend.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            cmd.getErr().println("asymnvm drill-backend: " + AsymNvmCli.oneLine(ex));
            return 1;
        });
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("--pm", pm, "--port",
                Integer.toString(port), "--size", size));
        if (credentials != null) {
            args.addAll(java.util.List.of("--credentials", credentials));
        }
        return backend.execute(args.toArray(String[]::new));
    }
}
