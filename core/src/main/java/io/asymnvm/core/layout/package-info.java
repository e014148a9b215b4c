/**
 * On-media and on-wire layouts: each structure has exactly one class here with named offsets, validators and
 * a diagram. All values are little-endian. No other class hard-codes an offset.
 */
package io.asymnvm.core.layout;
