package io.asymnvm.examples.cli;

import io.asymnvm.core.fabric.WaitPolicy;
import io.asymnvm.examples.commit.BusyLoopbackProbe;
import io.asymnvm.examples.commit.CommitLatencyRun;
import io.asymnvm.examples.commit.CommitReport;
import io.asymnvm.examples.commit.CommitRig;
import io.asymnvm.examples.commit.FabricKind;
import picocli.CommandLine;
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
            + "ratio, round_trips_per_commit, commits; with --mirrors 1 also mirrors, unreplicated_p50_us, "
            + "replication_ratio, backend_flushes_per_commit, mirror_flushes_per_commit; unless --no-busy-probe, "
            + "loopback_busy_rtt_us and ratio_busy_rtt.")
    boolean json;

    @Option(names = "--mirrors", defaultValue = "0",
            description = "SYNC mirrors (0.." + CommitRig.MAX_MIRRORS + "). With 1, the commits measured are "
                    + "replicated to a mirror node, and an unreplicated frontend's commits are measured in the "
                    + "same run (replication_ratio = replicated p50 / unreplicated p50). Default: ${DEFAULT-VALUE}.")
    int mirrors;

    // ---- waiting policy and the busy-polled loopback probe (issue 8, goal 5) ----
    @Option(names = "--wait-policy", defaultValue = "adaptive", converter = WaitPolicyConverter.class,
            description = "How each committing thread (and the raw round trip) waits for its FLUSH: spin "
                    + "(busy-poll), adaptive (learns spin-then-park or park) or park. Default: ${DEFAULT-VALUE}.")
    WaitPolicy.Kind waitPolicy;

    @Option(names = "--spin", description = "Same as --wait-policy spin.")
    boolean spin;

    @Option(names = "--no-busy-probe", negatable = false, description = "Do not interleave the busy-polled "
            + "loopback round trip (64 B, both ends polling non-blocking sockets: loopback_busy_rtt_us and "
            + "ratio_busy_rtt = commit p50 / it). It spins two threads during its blocks.")
    boolean noBusyProbe;

    /** spin, adaptive or park, case-insensitive; an unknown name is refused naming the choices. */
    static final class WaitPolicyConverter implements CommandLine.ITypeConverter<WaitPolicy.Kind> {
        @Override
        public WaitPolicy.Kind convert(String value) {
            try {
                return WaitPolicy.Kind.parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    @Override
    public Integer call() {
        requireRange("--seconds", seconds, 1, MAX_SECONDS);
        requireRange("--warmup-seconds", warmupSeconds, 0, MAX_SECONDS);
        requireRange("--mirrors", mirrors, 0, CommitRig.MAX_MIRRORS);
        if (spin && waitPolicy != WaitPolicy.Kind.ADAPTIVE && waitPolicy != WaitPolicy.Kind.SPIN) {
            throw new ParameterException(spec.commandLine(), "--spin contradicts --wait-policy "
                    + waitPolicy.cliName());
        }
        WaitPolicy.Kind policy = spin ? WaitPolicy.Kind.SPIN : waitPolicy;
        CommitReport report;
        String transport;
        try (CommitRig rig = CommitRig.start(fabric, mirrors, policy);
             BusyLoopbackProbe busy = noBusyProbe ? null : BusyLoopbackProbe.open()) {
            report = new CommitLatencyRun(rig, busy).run(TimeUnit.SECONDS.toNanos(warmupSeconds),
                    TimeUnit.SECONDS.toNanos(seconds));
            transport = rig.transport();
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(report.toJson(transport));
        } else {
            out.print(report.toText());
            out.println("  transport                       " + transport);
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
