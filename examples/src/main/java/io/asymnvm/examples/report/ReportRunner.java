package io.asymnvm.examples.report;

import io.asymnvm.examples.support.ScratchDirectory;
import me.tongfei.progressbar.DelegatingProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs the rows one after the other (never two at once: they would share the 2 cores), each in a fresh scratch
 * directory under {@code scratch} that is deleted after it, with a progress bar on standard error naming the row
 * running. A row that throws is recorded with its error and the next one runs.
 */
final class ReportRunner {
    private static final Logger LOG = LoggerFactory.getLogger(ReportRunner.class);

    private final Path scratch;
    private final long seed;
    private final boolean progress;

    ReportRunner(Path scratch, long seed, boolean progress) {
        this.scratch = scratch;
        this.seed = seed;
        this.progress = progress;
    }

    List<ReportOutcome> run(List<ReportEntry> entries) {
        List<ReportOutcome> out = new ArrayList<>();
        ProgressBarBuilder b = new ProgressBarBuilder().setTaskName("bench report").setInitialMax(entries.size())
                .setStyle(ProgressBarStyle.ASCII).setUpdateIntervalMillis(250).continuousUpdate();
        if (!progress) {
            b.setConsumer(new DelegatingProgressBarConsumer(s -> { }));
        }
        try (ProgressBar bar = b.build()) {
            for (ReportEntry e : entries) {
                bar.setExtraMessage(e.name());
                out.add(runOne(e));
                bar.step();
            }
            bar.setExtraMessage("done");
        }
        return out;
    }

    private ReportOutcome runOne(ReportEntry e) {
        Path dir = ScratchDirectory.createIn(scratch, "row-");
        long start = System.nanoTime();
        try {
            ReportRun run = new ReportRun(e.seconds(), e.warmup(), e.threads(), e.records(), dir, seed);
            ReportResult result = e.workload().run(run);
            return ReportOutcome.of(e, result, (System.nanoTime() - start) / 1e9);
        } catch (Exception | LinkageError | AssertionError t) {
            LOG.warn("bench report: row {} failed", e.name(), t);
            return ReportOutcome.failed(e, t, (System.nanoTime() - start) / 1e9);
        } finally {
            ScratchDirectory.delete(dir);
        }
    }
}
