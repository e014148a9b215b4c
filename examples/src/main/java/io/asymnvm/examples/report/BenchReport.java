package io.asymnvm.examples.report;

import io.asymnvm.examples.support.ScratchDirectory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * {@code bench report}: runs the rows ({@link ReportRunner}), draws the figures ({@link ReportCharts}) and writes
 * {@code report.json} and {@code report.html} ({@link ReportWriter}) into the output directory.
 */
public final class BenchReport {
    /** What a report run produced: every row, and the figure files by title. */
    public record Summary(List<ReportOutcome> rows, Map<String, String> figures, Path directory) {
        /** Rows that failed. */
        public long failed() {
            return rows.stream().filter(r -> !r.ok()).count();
        }
    }

    private final List<ReportEntry> entries;
    private final boolean quick;
    private final long seed;
    private final boolean progress;

    public BenchReport(List<ReportEntry> entries, boolean quick, long seed, boolean progress) {
        this.entries = List.copyOf(Objects.requireNonNull(entries, "entries"));
        this.quick = quick;
        this.seed = seed;
        this.progress = progress;
    }

    /** Runs every row and writes the report into {@code out} (created if missing). */
    public Summary run(Path out) {
        try {
            Files.createDirectories(out);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the report directory " + out, e);
        }
        long start = System.nanoTime();
        Path scratch = ScratchDirectory.create("asymnvm-bench-report-");
        List<ReportOutcome> rows;
        try {
            rows = new ReportRunner(scratch, seed, progress).run(entries);
        } finally {
            ScratchDirectory.delete(scratch);
        }
        Map<String, String> figures = ReportCharts.write(rows, out);
        ReportWriter.write(out, quick, rows, figures, (System.nanoTime() - start) / 1e9);
        return new Summary(rows, figures, out);
    }
}
