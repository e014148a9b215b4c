package io.asymnvm.examples.report;

import java.util.Objects;

/**
 * One row of the matrix: the figure section it belongs to, the workload, and its run parameters (the report fills
 * in the scratch directory per row).
 *
 * @param section   {@link ReportMatrix#MAP}, {@link ReportMatrix#PUTS}, {@link ReportMatrix#YCSB},
 *                  {@link ReportMatrix#SCALING} or {@link ReportMatrix#APPS}
 * @param workload  what runs
 * @param seconds   timed phase, seconds
 * @param warmup    warm-up, seconds
 * @param threads   client threads
 * @param records   data set size
 */
public record ReportEntry(String section, ReportWorkload workload, double seconds, double warmup, int threads,
                          int records) {
    public ReportEntry {
        Objects.requireNonNull(section, "section");
        Objects.requireNonNull(workload, "workload");
    }

    /** The row's name in the report: the workload's, with the thread count in the scaling section. */
    public String name() {
        return section.equals(ReportMatrix.SCALING) ? workload.name() + "/t" + threads : workload.name();
    }
}
