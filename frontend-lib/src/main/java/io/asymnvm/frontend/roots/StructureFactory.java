package io.asymnvm.frontend.roots;

import io.asymnvm.frontend.Transaction;

/**
 * Creates a persistent structure of one type inside a transaction, for named roots. Implementations are found
 * with {@link java.util.ServiceLoader} when a frontend opens, so that a named structure can be created again
 * during recovery (re-execution of the transaction that created it) without any registration by the caller.
 */
public interface StructureFactory {

    /** Stable type id stored in root directories and the catalog. */
    int type();

    /** Human name of the type for messages ("btree", "hash"). */
    String typeName();

    /** Allocates and initializes the structure's root; returns its heap address. Deterministic. */
    long create(Transaction tx, String name, int keyCodec, int valueCodec);
}
