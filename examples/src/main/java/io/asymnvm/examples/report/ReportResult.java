package io.asymnvm.examples.report;

/** What a {@link ReportWorkload} measured; {@code extra} holds workload-specific figures by JSON key. */
public record ReportResult(String name, String fabric, int threads, double opsPerSecond, double p50Micros,
                           double p99Micros, java.util.Map<String, Object> extra) {}
