package io.asymnvm.frontend;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks an interface method as a persistent transaction. Called through the proxy returned by
 * {@link AsymNvm#transactional(Class, Object)}, the method runs atomically against persistent memory and, when it
 * returns, has survived any crash (with {@link Durability#SYNC}). Its semantic record (method identity and
 * Kryo-serialized arguments) is the commit point: one network round trip.
 *
 * <h2>Determinism rule</h2>
 * The method may run more than once: again after a page-cache miss, and again during frontend recovery, where
 * its semantic record is re-executed with the same arguments. So it must be a deterministic function of the
 * persistent state and its arguments: no clock, no randomness, no I/O or other outside side effects inside. Pass
 * such values in as arguments (they are logged). An exception thrown by the method aborts the transaction:
 * nothing of it is logged, applied or visible, and the exception reaches the caller.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface PersistentTransaction {

    /** A read-only transaction logs nothing; it returns once every write it observed is durable. */
    boolean readOnly() default false;

    /** Whether the call waits for its semantic record to be persistent before returning. */
    Durability durability() default Durability.SYNC;
}
