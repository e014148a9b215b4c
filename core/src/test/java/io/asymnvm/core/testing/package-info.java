/** Helpers shared by the tests of every module (published as asymnvm-core's test jar): fuzz-test seeds. */
package io.asymnvm.core.testing;
