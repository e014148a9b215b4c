/**
 * SmallBank, the second of AsymNVM's applications: customers (Accounts: name to id), their Savings and Checking
 * balances in persistent hash maps, the six transactions as {@code @PersistentTransaction} methods of {@link
 * io.asymnvm.examples.smallbank.SmallBank}, the standard mix with hotspot access ({@link
 * io.asymnvm.examples.smallbank.SmallBankMix}) keeping an oracle of the money the run added and removed, and the
 * {@code bench smallbank} run that checks it ({@link io.asymnvm.examples.smallbank.SmallBankBench}).
 */
package io.asymnvm.examples.smallbank;
