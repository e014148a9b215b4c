package io.asymnvm.examples.cli;

import io.asymnvm.examples.commit.CommitLatencyRun;
import io.asymnvm.examples.commit.CommitReport;
import io.asymnvm.examples.commit.CommitRig;
import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.commit.SpinLoopbackProbe;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code asymnvm bench commit}: single-thread SYNC commit latency against the raw persisted-write round trip of
 * the same fabric, measured in one run (see {@link CommitLatencyRun}). With {@code --json}, standard output is
 * exactly one JSON object.
 */
@Command(name = "commit", mixinStandardHelpOptions = true,
        description = "Commit latency vs. the fabric's raw WRITE+FLUSH round trip (backend in this JVM).")
public final class CommitBenchCommand implements Callable<Integer> {
    static final int MAX_SECONDS = 3600;

    @Spec
    CommandSpec spec;

    @Option(names = "--fabric", required = true, converter = FabricKind.Converter.class,
            completionCandidates = FabricKind.Names.class,
            description = "Fabric: ${COMPLETION-CANDIDATES}.")
    FabricKind fabric;

    @Option(names = "--seconds", defaultValue = "5",
            description = "Measured seconds (1.." + MAX_SECONDS + "). Default: ${DEFAULT-VALUE}.")
    int seconds;

    @Option(names = "--warmup-seconds", defaultValue = "1",
            description = "Unrecorded warm-up seconds (0.." + MAX_SECONDS + "). Default: ${DEFAULT-VALUE}.")
    int warmupSeconds;

    @Option(names = "--json", description = "Print one JSON object with commit_p50_us, commit_p99_us, rtt_p50_us, "
            + "ratio, round_trips_per_commit, commits.")
    boolean json;

    // --- waiting policy (issue 8, goal 5) ---
    @Option(names = "--wait-policy", defaultValue = "adaptive", converter = WaitPolicyConverter.class,
            description = "How the committing thread waits for its FLUSH: spin (busy-poll), adaptive (spin about "
                    + "twice the recent round trip, then park) or park. Default: ${DEFAULT-VALUE}. With spin the "
                    + "run also measures the busy-polled loopback round trip (spin_rtt_p50_us, spin_ratio).")
    io.asymnvm.core.fabric.WaitPolicy.Kind waitPolicy;

    @Option(names = "--spin", description = "Same as --wait-policy spin.")
    boolean spin;

    static final class WaitPolicyConverter implements picocli.CommandLine.ITypeConverter<
            io.asymnvm.core.fabric.WaitPolicy.Kind> {
        @Override
        public io.asymnvm.core.fabric.WaitPolicy.Kind convert(String value) {
            try {
                return io.asymnvm.core.fabric.WaitPolicy.Kind.parse(value);
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    @Override
    public Integer call() {
        requireRange("--seconds", seconds, 1, MAX_SECONDS);
        requireRange("--warmup-seconds", warmupSeconds, 0, MAX_SECONDS);
        io.asymnvm.core.fabric.WaitPolicy.Kind policy = spin ? io.asymnvm.core.fabric.WaitPolicy.Kind.SPIN
                : waitPolicy;
        if (spin && waitPolicy != io.asymnvm.core.fabric.WaitPolicy.Kind.ADAPTIVE
                && waitPolicy != io.asymnvm.core.fabric.WaitPolicy.Kind.SPIN) {
            throw new ParameterException(spec.commandLine(), "--spin contradicts --wait-policy "
                    + waitPolicy.cliName());
        }
        CommitReport report;
        try (CommitRig rig = CommitRig.start(fabric, policy);
             SpinLoopbackProbe spinProbe = policy == io.asymnvm.core.fabric.WaitPolicy.Kind.SPIN
                     ? SpinLoopbackProbe.open() : null) {
            report = new CommitLatencyRun(rig, spinProbe).run(TimeUnit.SECONDS.toNanos(warmupSeconds),
                    TimeUnit.SECONDS.toNanos(seconds));
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(report.toJson());
        } else {
            out.print(report.toText());
        }
        out.flush();
        return 0;
    }

    private void requireRange(String option, int value, int min, int max) {
        if (value < min || value > max) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '" + option + "': " + value
                    + " is outside [" + min + ", " + max + "]");
        }
    }
}
