/**
 * A persistent bank: a fixed array of account balances in persistent memory, changed only by
 * {@link io.asymnvm.frontend.PersistentTransaction} methods, so every transfer is atomic and durable and the
 * total never changes. The smallest complete example of the client API.
 */
package io.asymnvm.examples.bank;
