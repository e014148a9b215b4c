package io.asymnvm.examples.cli;

import io.asymnvm.examples.appbench.AppBenchConfig;
import io.asymnvm.examples.appbench.AppBenchReport;
import io.asymnvm.examples.commit.FabricKind;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.io.PrintWriter;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/** The options {@code bench tatp} and {@code bench smallbank} share (a picocli mixin), and how both run and print. */
public final class AppBenchOptions {
    @Option(names = "--fabric", defaultValue = "local", converter = FabricKind.Converter.class,
            completionCandidates = FabricKind.Names.class,
            description = "Fabric: ${COMPLETION-CANDIDATES}. Default: ${DEFAULT-VALUE}.")
    FabricKind fabric;

    @Option(names = "--threads", defaultValue = "1",
            description = "Threads running transactions (1.." + AppBenchConfig.MAX_THREADS + "). "
                    + "Default: ${DEFAULT-VALUE}.")
    int threads;

    @Option(names = "--seconds", defaultValue = "10",
            description = "Measured seconds (more than 0, at most 3600; fractions allowed). Default: ${DEFAULT-VALUE}.")
    double seconds;

    @Option(names = "--warmup-seconds", defaultValue = "2",
            description = "Unmeasured seconds of the same mix first (0..3600). Default: ${DEFAULT-VALUE}.")
    double warmupSeconds;

    @Option(names = "--seed", defaultValue = "42", description = "Seed of the population and the threads' draws. "
            + "Default: ${DEFAULT-VALUE}.")
    long seed;

    @Option(names = "--json", description = "Print one JSON object (ops_per_s, p50_us, p99_us, aborts, user_aborts, "
            + "per_type, ...).")
    boolean json;

    /**
     * Checks every option, runs {@code bench} with progress lines on standard error, prints the report; exit code 1
     * when the report's {@code failedCheck} names a check that is false.
     */
    int run(CommandSpec spec, String scaleOption, long scale, long minScale,
            BiFunction<AppBenchConfig, Consumer<String>, AppBenchReport> bench, String failedCheck) {
        AppBenchConfig config;
        try {
            config = new AppBenchConfig(fabric, threads, seconds, warmupSeconds, scale, seed)
                    .requireScale(scaleOption, minScale);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value: " + e.getMessage());
        }
        PrintWriter err = spec.commandLine().getErr();
        AppBenchReport report = bench.apply(config, line -> {
            err.println(spec.name() + ": " + line);
            err.flush();
        });
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? report.toJson() + System.lineSeparator() : report.toText());
        out.flush();
        if (failedCheck != null && Boolean.FALSE.equals(report.checks().get(failedCheck))) {
            err.println(spec.name() + ": check " + failedCheck + " failed: " + report.checks());
            err.flush();
            return 1;
        }
        return 0;
    }
}
