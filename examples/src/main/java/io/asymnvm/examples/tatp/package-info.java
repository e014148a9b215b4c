/**
 * TATP (the Telecom Application Transaction Processing benchmark), one of AsymNVM's two applications: the
 * standard schema (Subscriber, Access_Info, Special_Facility, Call_Forwarding) on persistent hash maps and a
 * persistent B+tree, its seven transactions as {@code @PersistentTransaction} methods of {@link
 * io.asymnvm.examples.tatp.Tatp}, the standard mix with non-uniform subscriber ids ({@link
 * io.asymnvm.examples.tatp.TatpMix}), and the {@code bench tatp} run ({@link io.asymnvm.examples.tatp.TatpBench}).
 */
package io.asymnvm.examples.tatp;
