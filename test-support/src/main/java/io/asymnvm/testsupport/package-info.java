/**
 * Fixtures shared by the tests of every module (DESIGN §7): temporary PM directories on tmpfs. Test scope only;
 * fixtures that core's own tests use live in core's test-jar ({@code io.asymnvm.core.testing}).
 */
package io.asymnvm.testsupport;
