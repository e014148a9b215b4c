package io.asymnvm.examples.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.kv.StructureKind;
import io.asymnvm.examples.ycsb.AsymNvmYcsbDb;
import io.asymnvm.examples.ycsb.YcsbRun;
import io.asymnvm.frontend.ExecutionMode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code asymnvm ycsb}: YCSB's own client against the project's binding, load then run of each workload, with
 * YCSB's value checks on. Exit code 0 only if no operation failed and no value check failed; 1 otherwise.
 */
@Command(name = "ycsb", mixinStandardHelpOptions = true,
        description = {"Run YCSB (site.ycsb.Client, dataintegrity=true) against a persistent hash map or B+tree:",
                "load, then run, for each workload; fails on any failed operation or [VERIFY] error."})
public final class YcsbCommand implements Callable<Integer> {
    static final long MAX_COUNT = 100_000_000L;
    static final int MAX_THREADS = 256;

    @Spec
    CommandSpec spec;

    @Option(names = "--workload", defaultValue = "a",
            description = "Workloads to run, letters a-f (e.g. af); e needs --structure btree. Default: ${DEFAULT-VALUE}.")
    String workloads;

    @Option(names = "--fabric", defaultValue = "local", converter = FabricKind.Converter.class,
            completionCandidates = FabricKind.Names.class,
            description = "local (backend embedded in the YCSB JVM) or tcp (backend in this JVM on loopback). "
                    + "Default: ${DEFAULT-VALUE}.")
    FabricKind fabric;

    @Option(names = "--structure", defaultValue = "hash", converter = StructureKind.Converter.class,
            completionCandidates = StructureKind.Names.class,
            description = "${COMPLETION-CANDIDATES}. Default: ${DEFAULT-VALUE}.")
    StructureKind structure;

    @Option(names = "--records", defaultValue = "10000", description = "Records loaded. Default: ${DEFAULT-VALUE}.")
    long records;

    @Option(names = "--operations", defaultValue = "10000",
            description = "Operations of the run phase. Default: ${DEFAULT-VALUE}.")
    long operations;

    @Option(names = "--threads", defaultValue = "1", description = "YCSB client threads. Default: ${DEFAULT-VALUE}.")
    int threads;

    @Option(names = "--field-count", defaultValue = "10", description = "Fields per record. Default: ${DEFAULT-VALUE}.")
    int fieldCount;

    @Option(names = "--field-length", defaultValue = "100",
            description = "Bytes per field (10 x 100: YCSB's standard 1 KiB record). Default: ${DEFAULT-VALUE}.")
    int fieldLength;

    @Option(names = "--json", description = "Print one JSON array: per phase workload, phase, operations, failed, "
            + "verified, verifyErrors, opsPerSecond, runtimeMillis, exitCode, returns, busyMicros, busyOpsPerSecond, "
            + "averageMicros, medianMicros, expectedOperations, warmupOperations, warmupUpdates, warmupMillis.")
    boolean json;

    @Option(names = "--mode", defaultValue = "asymnvm", converter = ModeConverter.class,
            description = "asymnvm (the design) or naive (the baseline: no page cache, every transaction written "
                    + "through to the heap before it returns). Default: ${DEFAULT-VALUE}.")
    ExecutionMode mode = ExecutionMode.ASYMNVM;

    @Option(names = "--warmup-operations", paramLabel = "N",
            description = "Unmeasured operations the binding runs in the client JVM before each run phase (the "
                    + "workload's keys, reads and same-value updates; value checks stay valid), so a fresh client "
                    + "is measured with a warm cache and JIT; 0 for none. Default: as many as --records, at most "
                    + YcsbRun.DEFAULT_WARMUP_CAP + ".")
    Long warmupOperations;

    /** The binding class; tests substitute one that misbehaves, to prove failures are reported. */
    @Option(names = "--db", hidden = true, defaultValue = "io.asymnvm.examples.ycsb.AsymNvmYcsbDb")
    String dbClass = AsymNvmYcsbDb.class.getName();

    @Override
    public Integer call() throws JsonProcessingException {
        requireRange("--records", records, 1, MAX_COUNT);
        requireRange("--operations", operations, 1, MAX_COUNT);
        requireRange("--threads", threads, 1, MAX_THREADS);
        requireRange("--field-count", fieldCount, 1, 1_000);
        requireRange("--field-length", fieldLength, 1, 64 << 10);
        long warmup = warmupOperations == null ? YcsbRun.defaultWarmupOperations(records) : warmupOperations;
        requireRange("--warmup-operations", warmup, 0, MAX_COUNT);
        YcsbRun.Config config;
        try {
            config = new YcsbRun.Config(workloads.toLowerCase(Locale.ROOT), fabric, structure, records, operations,
                    threads, fieldCount, fieldLength, dbClass, mode, 0, warmup);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        PrintWriter err = spec.commandLine().getErr();
        List<YcsbRun.Phase> phases = new YcsbRun(config, line -> {
            err.println("asymnvm ycsb: " + line);
            err.flush();
        }).run();
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(new ObjectMapper().writeValueAsString(phases));
        } else {
            out.printf("%-8s %-5s %10s %7s %9s %13s %10s %10s %7s%n", "workload", "phase", "operations", "failed",
                    "verified", "verify_errors", "ops/s", "busy_ops/s", "warmup");
            for (YcsbRun.Phase p : phases) {
                out.printf("%-8s %-5s %10d %7d %9d %13d %10.0f %10.0f %7d%n", p.workload(), p.phase(), p.operations(),
                        p.failed(), p.verified(), p.verifyErrors(), p.opsPerSecond(), p.busyOpsPerSecond(),
                        p.warmupOperations());
            }
        }
        out.flush();
        return phases.stream().allMatch(YcsbRun.Phase::clean) ? 0 : 1;
    }

    private void requireRange(String option, long value, long min, long max) {
        if (value < min || value > max) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '" + option + "': " + value
                    + " is outside [" + min + ", " + max + "]");
        }
    }
}
