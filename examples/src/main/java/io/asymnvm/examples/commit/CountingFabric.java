package io.asymnvm.examples.commit;

import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A fabric that remembers every connection it opened, so that the FLUSHes posted to one node can be counted over
 * all of them (a frontend opens one per link, and again on every reconnect). The counters are the connections'
 * own ({@link FabricConnection#counters()}): counts, not timings. Closing closes the delegate.
 */
final class CountingFabric implements Fabric {
    private final Fabric delegate;
    private final List<FabricConnection> connections = new CopyOnWriteArrayList<>();

    CountingFabric(Fabric delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public FabricConnection connect() {
        FabricConnection c = delegate.connect();
        connections.add(c);
        return c;
    }

    /** FLUSHes posted over every connection this fabric opened. */
    long flushes() {
        long n = 0;
        for (FabricConnection c : connections) {
            n += c.counters().snapshot().flushes();
        }
        return n;
    }

    @Override
    public void close() {
        delegate.close();
    }
}
