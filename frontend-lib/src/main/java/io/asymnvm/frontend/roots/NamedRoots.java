package io.asymnvm.frontend.roots;

import io.asymnvm.frontend.PersistentTransaction;

/**
 * The transaction behind named roots: finds {@code name} in this frontend's root directory, or creates the
 * structure and its directory entry in one transaction (so a crash never leaves a structure without its name or a
 * name without its structure). Registered by every frontend; used through {@code AsymNvm.namedRoot}.
 */
public interface NamedRoots {

    @PersistentTransaction
    long openOrCreate(String name, int type, int keyCodec, int valueCodec);

    /** The directory entry of {@code name} in this frontend, or null. */
    @PersistentTransaction(readOnly = true)
    io.asymnvm.core.layout.RootDirectoryLayout.Entry find(String name);
}
