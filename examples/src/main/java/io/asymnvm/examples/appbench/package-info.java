/**
 * The harness the application benchmarks share ({@code bench tatp}, {@code bench smallbank}): a backend and one
 * frontend over {@code local} or {@code tcp} ({@link io.asymnvm.examples.support.BenchRig}), threads drawing
 * transaction types from a fixed percentage mix for a fixed time ({@link io.asymnvm.examples.appbench.MixDriver}),
 * and the per-type counts, latency percentiles and engine counters of a run
 * ({@link io.asymnvm.examples.appbench.AppBenchReport}).
 */
package io.asymnvm.examples.appbench;
