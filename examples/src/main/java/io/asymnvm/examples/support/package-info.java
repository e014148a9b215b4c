/** Small helpers shared by the examples and the command line: scratch directories for PM images. */
package io.asymnvm.examples.support;
