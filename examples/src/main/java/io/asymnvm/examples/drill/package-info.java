/**
 * Crash drills on real processes ({@code asymnvm drill}): a backend and a frontend worker in separate JVMs on
 * loopback, one of them SIGKILLed at seeded random moments and restarted, the bank read back after every recovery
 * and checked against an oracle of acknowledged transfers ({@link io.asymnvm.examples.drill.Drill}). The worker
 * side is {@link io.asymnvm.examples.drill.DrillWorker}; the two talk through the line protocol of
 * {@code WorkerProtocol}.
 */
package io.asymnvm.examples.drill;
