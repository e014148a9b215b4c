package io.asymnvm.examples.report;

/** How a {@link ReportWorkload} runs: the fabric's name, threads, measured seconds, and a quick (small) variant. */
public record ReportRun(String fabric, int threads, double seconds, boolean quick) {}
