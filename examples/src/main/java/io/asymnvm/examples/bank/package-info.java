/**
 * Two persistent banks whose transfers are atomic and durable and keep the total constant:
 * {@link io.asymnvm.examples.bank.Bank}, a fixed array of balances at the frontend's root (the smallest complete
 * example of the raw {@link io.asymnvm.frontend.Transaction} API), and {@link io.asymnvm.examples.bank.HashBank},
 * accounts with arbitrary ids in a prebuilt persistent hash map opened by name.
 */
package io.asymnvm.examples.bank;
