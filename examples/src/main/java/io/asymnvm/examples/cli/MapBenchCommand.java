package io.asymnvm.examples.cli;

import io.asymnvm.core.Sizes;
import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.kv.StructureKind;
import io.asymnvm.examples.mapbench.MapBenchConfig;
import io.asymnvm.examples.mapbench.MapBenchReport;
import io.asymnvm.examples.mapbench.MapBenchRun;
import io.asymnvm.examples.mapbench.Workload;
import io.asymnvm.examples.mapbench.ZipfianGenerator;
import io.asymnvm.frontend.ExecutionMode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/**
 * {@code asymnvm bench map}: a YCSB-style workload against a persistent B+tree or hash map (backend in this JVM,
 * over the local or tcp fabric) and, in the same run and under the same driver, against a volatile
 * {@code TreeMap} under a lock or a {@code ConcurrentHashMap} (see {@link MapBenchRun}). With {@code --json},
 * standard output is exactly one JSON object. Exit code 1 if any read found no value.
 */
@Command(name = "map", mixinStandardHelpOptions = true,
        description = "YCSB-style read/update mix on a persistent B+tree or hash map vs. a volatile map in DRAM.")
public final class MapBenchCommand implements Callable<Integer> {
    static final int MAX_KEYS = 50_000_000;
    static final long MAX_OPS = 10_000_000_000L;
    static final int MAX_THREADS = 256;
    static final int MAX_VALUE_BYTES = 64 << 10;
    static final int MAX_BATCH = 10_000;

    @Spec
    CommandSpec spec;

    @Option(names = "--structure", required = true, converter = StructureKind.Converter.class,
            completionCandidates = StructureKind.Names.class, description = "Structure: ${COMPLETION-CANDIDATES}.")
    StructureKind structure;

    @Option(names = "--fabric", defaultValue = "local", converter = FabricKind.Converter.class,
            completionCandidates = FabricKind.Names.class,
            description = "Fabric: ${COMPLETION-CANDIDATES}. Default: ${DEFAULT-VALUE}.")
    FabricKind fabric;

    @Option(names = "--keys", defaultValue = "100000",
            description = "Keys loaded before the run (1.." + MAX_KEYS + "). Default: ${DEFAULT-VALUE}.")
    int keys;

    @Option(names = "--ops", defaultValue = "100000",
            description = "Measured operations, over all threads. Default: ${DEFAULT-VALUE}.")
    long ops;

    @Option(names = "--workload", defaultValue = "a", converter = Workload.Converter.class,
            completionCandidates = Workload.Names.class,
            description = "a: 50%% read / 50%% update, b: 95/5, c: read only, u: update only. Default: "
                    + "${DEFAULT-VALUE}.")
    Workload workload;

    @Option(names = "--threads", defaultValue = "1",
            description = "Threads running operations (1.." + MAX_THREADS + "). Default: ${DEFAULT-VALUE}.")
    int threads;

    @Option(names = "--value-bytes", defaultValue = "100",
            description = "Value size in bytes (1.." + MAX_VALUE_BYTES + "). Default: ${DEFAULT-VALUE}.")
    int valueBytes;

    @Option(names = "--theta", defaultValue = "" + ZipfianGenerator.DEFAULT_THETA,
            description = "Zipfian skew, in (0, 1). Default: ${DEFAULT-VALUE}.")
    double theta;

    @Option(names = "--seed", defaultValue = "42", description = "Seed of the key and operation choices. "
            + "Default: ${DEFAULT-VALUE}.")
    long seed;

    @Option(names = "--batch", defaultValue = "100",
            description = "Keys per load transaction (1.." + MAX_BATCH + "). Default: ${DEFAULT-VALUE}.")
    int batch;

    @Option(names = "--warmup-ops", description = "Unrecorded operations before the measured ones. "
            + "Default: a tenth of --ops.")
    Long warmupOps;

    @Option(names = "--pm-size", description = "PM image size (e.g. 2g). Default: from the data set, "
            + "at least 256m.")
    String pmSize;

    @Option(names = "--cache-size", description = "Frontend page cache (e.g. 512m). Default: enough for the "
            + "whole structure.")
    String cacheSize;

    @Option(names = "--json", description = "Print one JSON object with ops_per_s, p50_us, p99_us, "
            + "baseline_ops_per_s, ratio, runs_per_tx (attempts per transaction), runs_per_tx_p50, "
            + "runs_per_tx_p99, runs_per_tx_max (attempts per call), fetch_reads (READs of page fetches), "
            + "lockless_attempts, "
            + "lockless_conflicts, lockless_fallbacks (read-only calls run without the execution lock), "
            + "optimistic_attempts, optimistic_conflicts, optimistic_fallbacks, conflicts_per_tx (writers whose "
            + "method body ran without the execution lock).")
    boolean json;

    @Option(names = "--disjoint", description = "Thread i of T uses only keys i mod T (updates to disjoint keys "
            + "measure how writers scale); needs at least one key per thread.")
    boolean disjoint;

    @Option(names = "--no-progress", description = "No progress bars on standard error.")
    boolean noProgress;

    @Option(names = "--mode", defaultValue = "asymnvm", converter = ModeConverter.class,
            description = "asymnvm (the design) or naive (the baseline: no page cache, every transaction written "
                    + "through to the heap before it returns). Default: ${DEFAULT-VALUE}.")
    ExecutionMode mode;

    @Override
    public Integer call() {
        requireRange("--keys", keys, 1, MAX_KEYS);
        requireRange("--ops", ops, 1, MAX_OPS);
        requireRange("--threads", threads, 1, MAX_THREADS);
        requireRange("--value-bytes", valueBytes, 1, MAX_VALUE_BYTES);
        requireRange("--batch", batch, 1, MAX_BATCH);
        if (disjoint && keys < threads) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--keys': " + keys
                    + " is fewer than the " + threads + " threads --disjoint gives one key each at least");
        }
        if (!(theta > 0 && theta < 1)) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--theta': " + theta
                    + " is outside (0, 1)");
        }
        long warmup = warmupOps != null ? warmupOps : ops / 10;
        requireRange("--warmup-ops", warmup, 0, MAX_OPS);
        long pm = size("--pm-size", pmSize, MapBenchConfig.defaultPmBytes(keys, valueBytes));
        long cache = size("--cache-size", cacheSize, MapBenchConfig.defaultCacheBytes(keys, valueBytes));
        MapBenchConfig config = new MapBenchConfig(structure, fabric, keys, ops, workload, threads, valueBytes,
                theta, seed, batch, warmup, pm, cache, mode, disjoint);

        MapBenchReport report = new MapBenchRun(config, !noProgress).run();
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? report.toJson() + System.lineSeparator() : report.toText());
        out.flush();
        if (report.missing() > 0) {
            PrintWriter err = spec.commandLine().getErr();
            err.println("asymnvm bench map: " + report.missing() + " reads found no value");
            err.flush();
            return 1;
        }
        return 0;
    }

    private long size(String option, String text, long fallback) {
        if (text == null) {
            return fallback;
        }
        try {
            long v = Sizes.parse(text);
            if (v < (1 << 20)) {
                throw new IllegalArgumentException(text + " is below 1m");
            }
            return v;
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '" + option + "': "
                    + e.getMessage());
        }
    }

    private void requireRange(String option, long value, long min, long max) {
        if (value < min || value > max) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '" + option + "': " + value
                    + " is outside [" + min + ", " + max + "]");
        }
    }
}
