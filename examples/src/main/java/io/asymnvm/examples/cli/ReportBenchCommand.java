package io.asymnvm.examples.cli;

import io.asymnvm.examples.report.BenchReport;
import io.asymnvm.examples.report.ReportEntry;
import io.asymnvm.examples.report.ReportMatrix;
import io.asymnvm.examples.report.ReportOutcome;
import io.asymnvm.examples.ycsb.YcsbRun;
import io.asymnvm.frontend.ExecutionMode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * {@code asymnvm bench report}: the comparison matrix of {@link ReportMatrix} in one run, written as
 * {@code report.json}, {@code report.html} and PNG figures into {@code --out}. Exit code 1 if any row failed (the
 * report is written all the same, the row with its error).
 */
@Command(name = "report", mixinStandardHelpOptions = true,
        description = {"Run the comparison matrix (this project embedded, over tcp and in naive mode; MapDB; "
                + "Chronicle Map; TreeMap and ConcurrentHashMap; YCSB A-F; thread scaling) and write report.json, "
                + "report.html and PNG figures."})
public final class ReportBenchCommand implements Callable<Integer> {
    static final double MAX_SECONDS = 3600;
    static final int MAX_RECORDS = 10_000_000;
    static final long MAX_YCSB_WARMUP = 100_000_000L;

    @Spec
    CommandSpec spec;

    @Option(names = "--quick", description = "Fewer rows, 1 s each, small data sets: about 2 minutes.")
    boolean quick;

    @Option(names = "--out", defaultValue = "bench-report",
            description = "Directory for report.json, report.html and the PNGs. Default: ${DEFAULT-VALUE}.")
    Path out;

    @Option(names = "--mode", split = ",", converter = ModeConverter.class,
            description = "This project's modes to run: asymnvm, naive (comma-separated). Default: both.")
    List<ExecutionMode> modes;

    @Option(names = "--only", split = ",",
            description = "Run only the rows whose name starts with one of these prefixes, or of these sections "
                    + "(map, puts, ycsb, scaling, apps), e.g. ycsb-a,map-a/hash,scaling.")
    List<String> only;

    @Option(names = "--seconds", description = "Seconds of each row's timed phase (YCSB rows: rounded up to whole "
            + "seconds). Default: 1 with --quick, else 5.")
    Double seconds;

    @Option(names = "--records", description = "Keys of the map and puts rows and records of the YCSB rows. "
            + "Default: 10000 map/puts and 2000 YCSB with --quick, else 100000 and 10000.")
    Integer records;

    @Option(names = "--ycsb-warmup-operations", paramLabel = "N",
            description = "Unmeasured operations of each YCSB row's client before its measured ones (see ycsb "
                    + "--warmup-operations); 0 for none. Default: as many as the YCSB records, at most "
                    + YcsbRun.DEFAULT_WARMUP_CAP + ".")
    Long ycsbWarmupOperations;

    @Option(names = "--seed", defaultValue = "42", description = "Seed of every row. Default: ${DEFAULT-VALUE}.")
    long seed;

    @Option(names = "--no-progress", description = "No progress bar on standard error.")
    boolean noProgress;

    @Override
    public Integer call() {
        ReportMatrix.Sizes sizes = sizes();
        Set<ExecutionMode> chosen = modes == null || modes.isEmpty() ? EnumSet.allOf(ExecutionMode.class)
                : EnumSet.copyOf(modes);
        List<ReportEntry> entries = new ArrayList<>();
        for (ReportEntry e : ReportMatrix.build(sizes, chosen)) {
            if (only == null || only.stream().anyMatch(p -> e.name().startsWith(p) || e.section().equals(p))) {
                entries.add(e);
            }
        }
        if (entries.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--only': " + only
                    + " selects none of the " + ReportMatrix.build(sizes, chosen).size() + " rows");
        }
        BenchReport.Summary summary = new BenchReport(entries, quick, seed, !noProgress).run(out);
        PrintWriter w = spec.commandLine().getOut();
        w.printf(Locale.ROOT, "%-34s %4s %14s %10s %10s %8s%n", "row", "thr", "ops/s", "p50 us", "p99 us", "wall s");
        for (ReportOutcome r : summary.rows()) {
            if (r.ok()) {
                w.printf(Locale.ROOT, "%-34s %4d %,14.0f %10.1f %10.1f %8.1f%n", r.name(), r.threads(),
                        r.opsPerSecond(), r.p50Us(), r.p99Us(), r.wallSeconds());
            } else {
                w.printf(Locale.ROOT, "%-34s %4d FAILED %s%n", r.name(), r.threads(), r.error());
            }
        }
        w.println("report: " + out.resolve("report.html").toAbsolutePath() + " and report.json, "
                + summary.figures().size() + " figures");
        w.flush();
        return summary.failed() == 0 ? 0 : 1;
    }

    private ReportMatrix.Sizes sizes() {
        ReportMatrix.Sizes base = quick ? ReportMatrix.Sizes.forQuick() : ReportMatrix.Sizes.forFull();
        double s = base.seconds();
        if (seconds != null) {
            if (!(seconds > 0) || seconds > MAX_SECONDS) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--seconds': " + seconds
                        + " is outside (0, " + MAX_SECONDS + "]");
            }
            s = seconds;
        }
        int mapKeys = base.mapKeys();
        int ycsbRecords = base.ycsbRecords();
        int putKeys = base.putKeys();
        if (records != null) {
            if (records < 1 || records > MAX_RECORDS) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--records': " + records
                        + " is outside [1, " + MAX_RECORDS + "]");
            }
            mapKeys = records;
            ycsbRecords = records;
            putKeys = records;
        }
        double warmup = Math.min(base.warmup(), s / 3);
        long ycsbWarmup = YcsbRun.defaultWarmupOperations(ycsbRecords);
        if (ycsbWarmupOperations != null) {
            if (ycsbWarmupOperations < 0 || ycsbWarmupOperations > MAX_YCSB_WARMUP) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option "
                        + "'--ycsb-warmup-operations': " + ycsbWarmupOperations + " is outside [0, " + MAX_YCSB_WARMUP
                        + "]");
            }
            ycsbWarmup = ycsbWarmupOperations;
        }
        return new ReportMatrix.Sizes(quick, s, warmup, mapKeys, ycsbRecords, putKeys,
                seconds != null ? seconds : base.ycsbSeconds(), ycsbWarmup);
    }
}
