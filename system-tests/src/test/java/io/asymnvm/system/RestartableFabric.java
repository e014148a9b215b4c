package io.asymnvm.system;

import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The local fabric of whichever backend node serves now, for restarts of an in-process backend over the same PM
 * region: {@link #restart} closes every connection handed out (their posts fail with {@code CONNECTION_LOST}, as
 * on a backend process restart), runs the restart, and only then lets new connections through, to the node the
 * supplier returns after it.
 */
final class RestartableFabric implements Fabric {
    private final Supplier<Fabric> current;
    private final List<FabricConnection> handedOut = new ArrayList<>();

    RestartableFabric(Supplier<Fabric> current) {
        this.current = Objects.requireNonNull(current, "current");
    }

    /** Fails every open connection, then runs {@code restart} with new connections held back until it returns. */
    synchronized void restart(Runnable restart) {
        handedOut.forEach(FabricConnection::close);
        handedOut.clear();
        restart.run();
    }

    @Override
    public String name() {
        return "restartable " + current.get().name();
    }

    @Override
    public synchronized FabricConnection connect() {
        FabricConnection c = current.get().connect();
        handedOut.add(c);
        return c;
    }

    @Override
    public void close() {
        // the nodes own their fabrics
    }
}
