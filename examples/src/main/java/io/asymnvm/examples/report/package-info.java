/**
 * {@code ./asymnvm bench report}: one matrix of workloads (this project embedded, over tcp and in naive mode,
 * MapDB, Chronicle Map, volatile maps, YCSB A–F, thread scaling and any example that implements
 * {@link io.asymnvm.examples.report.ReportWorkload}) run in one process, written as {@code report.json} and a
 * {@code report.html} page with PNG plots. Every row reuses an existing rig; this package only schedules rows
 * and renders what they return.
 */
package io.asymnvm.examples.report;
