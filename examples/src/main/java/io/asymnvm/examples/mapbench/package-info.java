/**
 * {@code asymnvm bench map}: YCSB-style workloads (zipfian keys, read/update mixes) against a prebuilt persistent
 * structure and, in the same run and under the same driver, against a volatile map in DRAM, reporting throughput,
 * latency percentiles and the ratio of the two.
 */
package io.asymnvm.examples.mapbench;
