/** The frontend's link to its backend: connection, generation, reconnect and attach. */
package io.asymnvm.frontend.link;
