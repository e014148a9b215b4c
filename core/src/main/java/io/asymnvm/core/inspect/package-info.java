/**
 * The service through which {@code inspect --deep} walks what lies above the block allocator (named structures)
 * without the backend depending on the structures module: an implementation found by
 * {@link java.util.ServiceLoader} on the class path.
 */
package io.asymnvm.core.inspect;
