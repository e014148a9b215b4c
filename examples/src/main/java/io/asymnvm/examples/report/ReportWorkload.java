package io.asymnvm.examples.report;

/** One workload of the comparison matrix ({@code bench report}): a name and a run at a given fabric and threads. */
public interface ReportWorkload {
    String name();

    ReportResult run(ReportRun run) throws Exception;
}
