/**
 * Fixtures shared by the tests of every module (DESIGN §7): temporary PM directories on tmpfs, offline reading and
 * damaging of PM files, and waiting on conditions with a deadline. Test scope only; fixtures that core's own tests
 * use live in core's test-jar ({@code io.asymnvm.core.testing}). Fixtures that start backends and frontends stay in
 * their modules: they need backend-node and frontend-lib, whose own tests use this module.
 */
package io.asymnvm.testsupport;
