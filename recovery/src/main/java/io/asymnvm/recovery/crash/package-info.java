/**
 * Simulated power failure for crash-consistency tests (DESIGN §5): a persistent region that remembers which
 * cache lines were stored to since they were last persisted, can cut power at a chosen persist call, and yields
 * the images a real power failure could leave behind (8-byte aligned words are atomic, nothing larger), so that
 * recovery can be checked against every persist point.
 */
package io.asymnvm.recovery.crash;
