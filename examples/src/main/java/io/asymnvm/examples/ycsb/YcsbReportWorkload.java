package io.asymnvm.examples.ycsb;

import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.kv.StructureKind;
import io.asymnvm.examples.report.ReportResult;
import io.asymnvm.examples.report.ReportRun;
import io.asymnvm.examples.report.ReportWorkload;
import io.asymnvm.frontend.ExecutionMode;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A {@code bench report} row run by {@link YcsbRun}: YCSB's own client in a child JVM against the project's
 * binding, with its value checks on, one workload: load {@link ReportRun#records()} records of 1 KiB, then run
 * {@value #OPS_PER_SECOND} operations per second of the row's time (at least {@value #MIN_OPERATIONS}), after the
 * binding's unmeasured warm-up in the same client JVM (by default {@link YcsbRun#defaultWarmupOperations}: as many
 * operations as records; reported as {@code warmup_operations}). The row's
 * throughput is the run phase's operations over the time the client threads spent inside the binding
 * ({@link YcsbRun.Phase#busyMicros()} divided by the threads): YCSB's own figure divides by a run time that
 * includes opening the binding, seconds on a loaded machine (kept as {@code ycsb_overall_ops_per_s}). Any failed
 * operation or value check fails the row. YCSB reports no latency distribution back, so the result's histogram is
 * empty (an average is not a CDF). YCSB's {@code maxexecutiontime} is not used: its clock starts before the
 * binding opens, and on a loaded machine it expired before the first operation.
 */
public final class YcsbReportWorkload implements ReportWorkload {
    /** Operations per second of the row's time. */
    private static final long OPS_PER_SECOND = 2_000;
    private static final long MIN_OPERATIONS = 200;
    private static final int FIELD_COUNT = 10;
    private static final int FIELD_LENGTH = 100;

    private final char workload;
    private final StructureKind structure;
    private final FabricKind fabric;
    private final ExecutionMode mode;
    private final long warmupOperations;

    /** {@code warmupOperations}: the binding's unmeasured warm-up before the run phase (0: none). */
    public YcsbReportWorkload(char workload, StructureKind structure, FabricKind fabric, ExecutionMode mode,
                              long warmupOperations) {
        if (warmupOperations < 0) {
            throw new IllegalArgumentException("YCSB warm-up operations must not be negative: " + warmupOperations);
        }
        this.warmupOperations = warmupOperations;
        if (YcsbRun.WORKLOADS.indexOf(workload) < 0) {
            throw new IllegalArgumentException("unknown YCSB workload '" + workload + "'; known: a to f");
        }
        this.workload = workload;
        this.structure = Objects.requireNonNull(structure, "structure");
        this.fabric = Objects.requireNonNull(fabric, "fabric");
        this.mode = Objects.requireNonNull(mode, "mode");
    }

    @Override
    public String name() {
        return "ycsb-" + workload + "/" + structure.cliName() + "/" + (mode == ExecutionMode.NAIVE ? "naive-" : "")
                + fabric.cliName();
    }

    @Override
    public ReportResult run(ReportRun run) {
        long operations = Math.max(MIN_OPERATIONS, Math.round(run.seconds() * OPS_PER_SECOND));
        YcsbRun.Config config = new YcsbRun.Config(String.valueOf(workload), fabric, structure, run.records(),
                operations, run.threads(), FIELD_COUNT, FIELD_LENGTH, AsymNvmYcsbDb.class.getName(), mode, 0,
                warmupOperations);
        List<YcsbRun.Phase> phases = new YcsbRun(config, line -> { }).run();
        for (YcsbRun.Phase p : phases) {
            if (!p.clean()) {
                throw new IllegalStateException(name() + ": YCSB " + p.phase() + " failed: " + p.failed()
                        + " failed operations, " + p.verifyErrors() + " failed value checks, exit " + p.exitCode()
                        + ", returns " + p.returns());
            }
        }
        YcsbRun.Phase load = phases.get(0);
        YcsbRun.Phase measured = phases.get(phases.size() - 1);
        long busyNanos = Math.max(1, Math.round(measured.busyMicros() * 1000 / run.threads()));
        return new ReportResult(measured.operations(), busyNanos, ReportResult.newLatencyHistogram(),
                Map.of("load_ops_per_s", load.opsPerSecond(), "ycsb_overall_ops_per_s", measured.opsPerSecond(),
                "verified", (double) measured.verified(), "record_bytes", (double) FIELD_COUNT * FIELD_LENGTH,
                "warmup_operations", (double) measured.warmupOperations()));
    }
}
