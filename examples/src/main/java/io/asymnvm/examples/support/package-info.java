/**
 * Small helpers shared by the examples and the command line: scratch directories for PM images, the benchmarks'
 * rig of one backend and one frontend, and the threads of a timed benchmark phase.
 */
package io.asymnvm.examples.support;
