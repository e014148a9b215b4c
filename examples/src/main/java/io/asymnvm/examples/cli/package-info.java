/**
 * The {@code asymnvm} command line (picocli): {@code demo} runs the bank on an embedded backend and verifies it
 * after a reopen, {@code backend} runs a memory node, {@code bench commit} measures commit latency against the
 * fabric's raw round trip. Launched by the {@code ./asymnvm} script at the repository root.
 */
package io.asymnvm.examples.cli;
