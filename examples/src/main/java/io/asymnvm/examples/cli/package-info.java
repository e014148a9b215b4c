/**
 * The {@code asymnvm} command line (picocli): {@code demo} runs the bank, a hash map and a B+tree on an embedded
 * backend and verifies them after a reopen, {@code backend} runs a memory node, {@code kv} runs key-value actions
 * against a running backend, {@code bench commit} measures commit latency against the fabric's raw round trip and
 * {@code bench map} YCSB-style workloads on the structures against volatile maps. Launched by the
 * {@code ./asymnvm} script at the repository root.
 */
package io.asymnvm.examples.cli;
