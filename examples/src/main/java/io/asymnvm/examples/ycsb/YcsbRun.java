package io.asymnvm.examples.ycsb;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.kv.StructureKind;
import io.asymnvm.examples.support.ChildJvm;
import io.asymnvm.examples.support.ScratchDirectory;
import io.asymnvm.frontend.ExecutionMode;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs YCSB's own client ({@code site.ycsb.Client}, in a child JVM, exactly as a user would run it) against the
 * project's binding {@link AsymNvmYcsbDb}: for each workload a fresh table is loaded ({@code -load}), then the
 * workload runs ({@code -t}), both with {@code dataintegrity=true} so that every read value is checked against
 * the value YCSB wrote ({@code [VERIFY]}). Over {@code local} the backend is embedded in the client JVM and the
 * two phases reopen the same PM file; over {@code tcp} this JVM runs the backend on loopback for both phases.
 * Each phase's measurements come back through YCSB's JSON exporter and are counted per return code.
 */
public final class YcsbRun {
    /** Workloads by letter; E needs range scans (the B+tree). */
    public static final String WORKLOADS = "abcdef";
    private static final long CHILD_TIMEOUT_MINUTES = 60;
    private static final int LOG_TAIL_LINES = 20;
    /** YCSB's name of the median in its HdrHistogram export. */
    private static final String MEDIAN = "50thPercentileLatency(us)";

    /**
     * What to run; {@code dbClass} is the binding (tests substitute a faulty one to prove failures are seen),
     * {@code mode} the frontend's (the design or the naive baseline), {@code maxSeconds} YCSB's
     * {@code maxexecutiontime} of each phase (0: none, the phase runs its operations).
     */
    public record Config(String workloads, FabricKind fabric, StructureKind structure, long records,
                         long operations, int threads, int fieldCount, int fieldLength, String dbClass,
                         ExecutionMode mode, int maxSeconds, long warmupOperations) {
        /** The design, no time limit, no warm-up. */
        public Config(String workloads, FabricKind fabric, StructureKind structure, long records, long operations,
                      int threads, int fieldCount, int fieldLength, String dbClass) {
            this(workloads, fabric, structure, records, operations, threads, fieldCount, fieldLength, dbClass,
                    ExecutionMode.ASYMNVM, 0, 0);
        }

        /**
         * {@code warmupOperations}: the binding's unmeasured warm-up before each run phase, in the client JVM
         * ({@link YcsbWarmup}; 0: none).
         */
        public Config {
            java.util.Objects.requireNonNull(mode, "mode");
            if (maxSeconds < 0) {
                throw new IllegalArgumentException("YCSB max execution time must not be negative: " + maxSeconds);
            }
            if (warmupOperations < 0 || warmupOperations > YcsbWarmup.MAX_OPERATIONS) {
                throw new IllegalArgumentException("YCSB warm-up operations " + warmupOperations + " outside [0, "
                        + YcsbWarmup.MAX_OPERATIONS + "]");
            }
            for (char w : workloads.toCharArray()) {
                if (WORKLOADS.indexOf(w) < 0) {
                    throw new IllegalArgumentException("unknown YCSB workload '" + w + "'; known: a to f");
                }
                if (w == 'e' && !structure.ordered()) {
                    throw new IllegalArgumentException("workload e scans key ranges: it needs --structure btree, "
                            + "not " + structure.cliName());
                }
            }
        }

        /** Bytes of one record's value as the binding stores it. */
        long recordBytes() {
            return 3L + (long) fieldCount * (2 + "field".length() + 2 + 4 + fieldLength);
        }
    }

    /** Most warm-up operations by default ({@link #defaultWarmupOperations}). */
    public static final long DEFAULT_WARMUP_CAP = 10_000;

    /**
     * The default warm-up of a run phase: as many operations as records (about one touch per record on average,
     * fewer distinct records under a skewed distribution), at most {@value #DEFAULT_WARMUP_CAP}.
     */
    public static long defaultWarmupOperations(long records) {
        return Math.min(records, DEFAULT_WARMUP_CAP);
    }

    /**
     * One phase: operations done (calls into the binding: reads, updates, inserts, deletes, scans), those that did
     * not return OK (by op and return code in {@code returns}), value
     * checks that passed and failed, throughput, and the client's exit code. {@code busyMicros} is the time the
     * client threads spent inside those calls (per operation kind, count times YCSB's average latency, summed): YCSB's
     * own throughput divides by a run time that includes opening the binding (an embedded backend starts, a
     * frontend recovers), {@code operations / busyMicros} does not. {@code averageMicros}: YCSB's average latency of
     * each operation kind counted in {@code operations} (READ, UPDATE, ...), and {@code medianMicros} their median (on
     * a loaded machine far steadier than the average, which a few descheduled operations dominate).
     */
    public record Phase(String workload, String phase, long operations, long failed, long verified,
                        long verifyErrors, double opsPerSecond, long runtimeMillis, int exitCode,
                        Map<String, Long> returns, double busyMicros, Map<String, Double> averageMicros,
                        Map<String, Double> medianMicros, long expectedOperations, long warmupOperations,
                        long warmupUpdates, long warmupMillis) {
        /**
         * Whether the phase ran clean: no failed operation, no failed value check, a good exit, and at least the
         * operations asked for ({@code expectedOperations}, 0 when a time limit may cut it short: a client thread
         * whose binding failed to open does none and YCSB does not report it otherwise).
         */
        public boolean clean() {
            return failed == 0 && verifyErrors == 0 && exitCode == 0 && operations >= expectedOperations;
        }

        /**
         * Operations over the time the client threads spent inside the binding ({@code busyMicros}, summed over the
         * threads: with one thread the phase's throughput without opening the binding and the warm-up, the figure
         * the README quotes; with T threads multiply by T). 0 if nothing was timed.
         */
        @com.fasterxml.jackson.annotation.JsonProperty("busyOpsPerSecond")
        public double busyOpsPerSecond() {
            return busyMicros > 0 ? operations * 1e6 / busyMicros : 0.0;
        }

        /** The same phase with what the binding's warm-up reported (null: it ran none) and the operations asked. */
        Phase with(long expected, YcsbWarmup.Result warmup) {
            return new Phase(workload, phase, operations, failed, verified, verifyErrors, opsPerSecond,
                    runtimeMillis, exitCode, returns, busyMicros, averageMicros, medianMicros, expected,
                    warmup == null ? 0 : warmup.operations(), warmup == null ? 0 : warmup.updates(),
                    warmup == null ? 0 : warmup.millis());
        }
    }

    private final Config config;
    private final Consumer<String> progress;

    public YcsbRun(Config config, Consumer<String> progress) {
        this.config = config;
        this.progress = progress;
    }

    /** Runs every workload of the configuration, load then run, each on a fresh table. */
    public List<Phase> run() {
        List<Phase> out = new ArrayList<>();
        Path scratch = ScratchDirectory.create("asymnvm-ycsb-");
        try {
            for (char w : config.workloads().toCharArray()) {
                Path dir = Files.createDirectories(scratch.resolve("workload" + w));
                BackendNode node = config.fabric() == FabricKind.TCP ? BackendNode.start(BackendConfiguration
                        .builder(dir.resolve("backend.pm")).size(pmSize()).bindHost("127.0.0.1").port(0)
                        .conclude()) : null;
                try {
                    out.add(phase(w, true, dir, node));
                    out.add(phase(w, false, dir, node));
                } finally {
                    if (node != null) {
                        node.close();
                    }
                }
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare the YCSB run in " + scratch, e);
        } finally {
            ScratchDirectory.delete(scratch);
        }
    }

    /** The PM image: room for the records (and inserts during the run) four times over, at least 1 GiB. */
    long pmSize() {
        long data = (config.records() + config.operations()) * config.recordBytes();
        return Math.max(1L << 30, 4 * data);
    }

    private Phase phase(char workload, boolean load, Path dir, BackendNode node) throws IOException {
        return phase(workload, load, dir, node, Map.of());
    }

    /**
     * One phase (load or run) of {@code workload} against a backend the caller runs: {@code endpoint}'s binding
     * properties ({@code asymnvm.host}, {@code asymnvm.port}, {@code asymnvm.mirrors}, ...) are added to the
     * configuration's; {@code dir} receives YCSB's export and log. Tests use it to lose and promote a mirrored
     * backend between or during phases.
     */
    public Phase phase(char workload, boolean load, Path dir, Map<String, String> endpoint) throws IOException {
        return phase(workload, load, dir, null, endpoint);
    }

    private Phase phase(char workload, boolean load, Path dir, BackendNode node, Map<String, String> endpoint)
            throws IOException {
        String name = load ? "load" : "run";
        progress.accept("workload " + workload + " " + name + " (" + (load ? config.records() + " records"
                : config.operations() + " operations") + ", " + config.threads() + " threads, "
                + config.fabric().cliName() + ", " + config.structure().cliName() + ")");
        Path export = dir.resolve(name + ".json");
        Path log = dir.resolve(name + ".log");
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx1g");
        cmd.addAll(ChildJvm.inheritedJvmFlags());
        cmd.add("-cp");
        cmd.add(ChildJvm.classPath());
        cmd.add("site.ycsb.Client");
        cmd.add(load ? "-load" : "-t");
        cmd.add("-db");
        cmd.add(config.dbClass());
        Map<String, String> properties = properties(workload, load, dir, node, export);
        properties.putAll(endpoint);
        for (Map.Entry<String, String> p : properties.entrySet()) {
            cmd.add("-p");
            cmd.add(p.getKey() + "=" + p.getValue());
        }
        Process child = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        int exit;
        try {
            if (!child.waitFor(CHILD_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
                child.destroyForcibly();
                throw new IllegalStateException("YCSB " + name + " of workload " + workload + " did not finish in "
                        + CHILD_TIMEOUT_MINUTES + " minutes; its log: " + tail(log));
            }
            exit = child.exitValue();
        } catch (InterruptedException e) {
            child.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while YCSB ran", e);
        }
        if (!Files.exists(export)) {
            throw new IllegalStateException("YCSB " + name + " of workload " + workload + " exited with " + exit
                    + " and wrote no measurements; its log: " + tail(log));
        }
        long expected = load ? config.records() : config.maxSeconds() > 0 ? 0 : config.operations();
        Phase phase = parse(String.valueOf(workload), name, export, exit).with(expected,
                YcsbWarmup.parse(logLines(log)));
        if (!phase.clean()) {
            progress.accept("workload " + workload + " " + name + ": " + phase.returns() + "; YCSB log: "
                    + tail(log));
        }
        return phase;
    }

    private Map<String, String> properties(char workload, boolean load, Path dir, BackendNode node, Path export)
            throws IOException {
        Properties standard = new Properties();
        try (InputStream in = YcsbRun.class.getResourceAsStream("workload" + workload)) {
            if (in == null) {
                throw new IllegalStateException("workload file workload" + workload + " missing from the class path");
            }
            standard.load(in);
        }
        Map<String, String> p = new LinkedHashMap<>();
        standard.stringPropertyNames().stream().sorted().forEach(k -> p.put(k, standard.getProperty(k)));
        p.put("recordcount", String.valueOf(config.records()));
        p.put("operationcount", String.valueOf(config.operations()));
        p.put("threadcount", String.valueOf(config.threads()));
        p.put("fieldcount", String.valueOf(config.fieldCount()));
        p.put("fieldlength", String.valueOf(config.fieldLength()));
        p.put("dataintegrity", "true");
        p.put("exporter", "site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter");
        p.put("hdrhistogram.percentiles", "50,95,99"); // YCSB's default histogram; the median added (steadier)
        p.put("exportfile", export.toString());
        p.put("asymnvm.fabric", config.fabric().cliName());
        p.put("asymnvm.structure", config.structure().cliName());
        p.put("asymnvm.mode", config.mode().cliName());
        if (config.maxSeconds() > 0 && !load) { // the load phase always loads every record
            p.put("maxexecutiontime", String.valueOf(config.maxSeconds()));
        }
        if (config.warmupOperations() > 0 && !load) { // a warm-up needs the loaded table
            p.put(YcsbWarmup.OPERATIONS_PROPERTY, String.valueOf(config.warmupOperations()));
        }
        if (node != null) {
            p.put("asymnvm.host", "127.0.0.1");
            p.put("asymnvm.port", String.valueOf(node.port()));
            if (node.credentialsFile() != null) {
                p.put("asymnvm.credentials", node.credentialsFile().toString());
            }
        } else {
            p.put("asymnvm.dir", dir.resolve("pm").toString());
            p.put("asymnvm.size", String.valueOf(pmSize()));
        }
        return p;
    }

    /** Reads YCSB's JSON array export: {@code [{"metric": "READ", "measurement": "Return=OK", "value": n}, ...]}. */
    static Phase parse(String workload, String phase, Path export, int exit) throws IOException {
        JsonNode rows = new ObjectMapper().readTree(export.toFile());
        long operations = 0;
        long failed = 0;
        long verified = 0;
        long verifyErrors = 0;
        double throughput = 0;
        long runtime = 0;
        Map<String, Long> returns = new LinkedHashMap<>();
        Map<String, Double> counts = new LinkedHashMap<>();
        Map<String, Double> averages = new LinkedHashMap<>();
        Map<String, Double> medians = new LinkedHashMap<>();
        for (JsonNode row : rows) {
            // the text exporter brackets operation names ([READ]), the JSON exporters do not (READ)
            String metric = row.path("metric").asText().replace("[", "").replace("]", "");
            String measurement = row.path("measurement").asText();
            double value = row.path("value").asDouble();
            if (metric.equals("OVERALL")) {
                if (measurement.equals("Throughput(ops/sec)")) {
                    throughput = value;
                } else if (measurement.equals("RunTime(ms)")) {
                    runtime = (long) value;
                }
                continue;
            }
            boolean verify = metric.equals("VERIFY");
            if (measurement.startsWith("Return=")) {
                long n = (long) value;
                returns.merge(metric + " " + measurement, n, Long::sum);
                boolean ok = measurement.equals("Return=OK");
                if (verify) {
                    if (ok) {
                        verified += n;
                    } else {
                        verifyErrors += n;
                    }
                } else if (!ok) {
                    failed += n;
                }
            } else if (measurement.equals("Operations") && !verify && !metric.endsWith("-FAILED")
                    && !metric.equals("CLEANUP") && !metric.equals("READ-MODIFY-WRITE")) {
                // calls into the binding; a read-modify-write is counted as its read and its update
                operations += (long) value;
                counts.put(metric, value);
            } else if (measurement.equals("AverageLatency(us)")) {
                averages.put(metric, value);
            } else if (measurement.equals(MEDIAN)) {
                medians.put(metric, value);
            }
        }
        double busy = 0;
        Map<String, Double> averageMicros = new LinkedHashMap<>();
        for (Map.Entry<String, Double> c : counts.entrySet()) {
            double average = averages.getOrDefault(c.getKey(), 0.0);
            busy += c.getValue() * average;
            averageMicros.put(c.getKey(), average);
        }
        Map<String, Double> medianMicros = new LinkedHashMap<>();
        for (String op : counts.keySet()) {
            if (medians.containsKey(op)) {
                medianMicros.put(op, medians.get(op));
            }
        }
        return new Phase(workload, phase, operations, failed, verified, verifyErrors, throughput, runtime, exit,
                returns, busy, averageMicros, medianMicros, 0, 0, 0, 0);
    }

    private static List<String> logLines(Path log) {
        try {
            return Files.readAllLines(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return List.of();
        }
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n  ", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
