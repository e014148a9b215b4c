package io.asymnvm.examples.report;

/**
 * One row of the {@code bench report} matrix: a named workload that runs for a given time with a given number of
 * threads and returns what it measured.
 *
 * <p>An example (TATP, SmallBank, ...) joins the matrix by implementing this interface and adding one line to
 * {@link ReportMatrix}. An implementation starts and stops whatever it needs (backend, scratch files) inside
 * {@link #run}, measures only the timed phase, and must return within a few seconds after
 * {@link ReportRun#seconds()} plus its own set-up time. It is called from one thread at a time.
 */
public interface ReportWorkload {
    /** The row's name in the report, stable across runs (e.g. {@code "tatp/asymnvm-local"}). */
    String name();

    /** Runs the workload once and returns its throughput and latencies. */
    ReportResult run(ReportRun run) throws Exception;
}
