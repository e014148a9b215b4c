/**
 * Shared foundations of AsymNVM: error codes, the project exception, and boundary checks. Subpackages hold
 * persistent regions ({@code region}), on-media and on-wire layouts ({@code layout}) and the fabric SPI with
 * its local and TCP implementations ({@code fabric}).
 */
package io.asymnvm.core;
