/**
 * Named roots: each frontend's root directory in PM (created atomically with the structure it names), the
 * structure factory SPI, and the transaction that opens or creates a root by name.
 */
package io.asymnvm.frontend.roots;
