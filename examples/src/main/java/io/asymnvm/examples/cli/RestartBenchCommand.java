package io.asymnvm.examples.cli;

import io.asymnvm.core.Sizes;
import io.asymnvm.examples.recovery.BackendRestartRun;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code asymnvm bench restart}: backend restart time on a PM file of the given size (see
 * {@link BackendRestartRun}). The sparse file goes to /dev/shm when it has room, else to {@code --dir} (default:
 * the working directory), and is removed afterwards. With {@code --json}, standard output is one JSON object.
 */
@Command(name = "restart", mixinStandardHelpOptions = true,
        description = "Backend restart time (BackendNode.start until serving) on a PM file of a given size.")
public final class RestartBenchCommand implements Callable<Integer> {
    static final long MIN_SIZE = 64L << 20;
    static final long MAX_SIZE = 1L << 40;

    @Spec
    CommandSpec spec;

    @Option(names = "--size", defaultValue = "1g", description = "PM file size, e.g. 64m, 1g, 8g (64m..1t). "
            + "Default: ${DEFAULT-VALUE}.")
    String size;

    @Option(names = "--repetitions", defaultValue = "7", description = "Timed restarts (1..100). "
            + "Default: ${DEFAULT-VALUE}.")
    int repetitions;

    @Option(names = "--dir", description = "Directory for the PM file when /dev/shm lacks room. Default: the "
            + "working directory.")
    Path dir;

    @Option(names = "--json", description = "Print one JSON object with size_bytes, repetitions, restart_ms_p50, "
            + "restart_ms_max, restart_ms_min, format_ms.")
    boolean json;

    @Override
    public Integer call() {
        long bytes;
        try {
            bytes = Sizes.parse(size);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--size': " + e.getMessage());
        }
        if (bytes < MIN_SIZE || bytes > MAX_SIZE) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--size': " + size
                    + " is outside [64m, 1t]");
        }
        if (repetitions < 1 || repetitions > 100) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--repetitions': "
                    + repetitions + " is outside [1, 100]");
        }
        Path base = BackendRestartRun.chooseBase(bytes, dir != null ? dir : Path.of("").toAbsolutePath());
        BackendRestartRun.Report report = BackendRestartRun.run(bytes, repetitions, base);
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? report.toJson() + "\n" : report.toText());
        out.flush();
        return 0;
    }
}
