/**
 * The client API: {@link io.asymnvm.frontend.AsymNvm}, {@link io.asymnvm.frontend.PersistentTransaction},
 * {@link io.asymnvm.frontend.Transaction} and options.
 */
package io.asymnvm.frontend;
