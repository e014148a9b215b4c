/**
 * The commit-latency measurement behind {@code asymnvm bench commit} and the JMH {@code CommitBenchmark}: a
 * backend node and a frontend over one fabric ({@link io.asymnvm.examples.commit.CommitRig}), and a harness that
 * interleaves single-thread SYNC commits with the fabric's raw persisted-write round trip, so the ratio of the
 * two is measured under the same conditions.
 */
package io.asymnvm.examples.commit;
