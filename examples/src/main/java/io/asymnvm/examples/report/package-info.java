/**
 * The comparison matrix's workload contract ({@code bench report}, issue 8): each workload runs for a given fabric,
 * thread count and duration and returns throughput, latency percentiles and its own figures.
 */
package io.asymnvm.examples.report;
