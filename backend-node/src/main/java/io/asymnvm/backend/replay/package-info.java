/** The replayer agent: verified redo batches into the PM image, then an atomic checkpoint advance. */
package io.asymnvm.backend.replay;
