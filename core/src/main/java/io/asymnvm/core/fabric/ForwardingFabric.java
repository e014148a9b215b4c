package io.asymnvm.core.fabric;

import java.util.Objects;

/**
 * A {@link Fabric} whose connections are another fabric's, each wrapped by {@link #wrap} (typically in a
 * {@link ForwardingConnection} that changes one operation: fault injection, gating, counting). Name and close are
 * the delegate's.
 */
public abstract class ForwardingFabric implements Fabric {
    private final Fabric delegate;

    protected ForwardingFabric(Fabric delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** Wraps a new connection of the delegate fabric. */
    protected abstract FabricConnection wrap(FabricConnection connection);

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public final FabricConnection connect() {
        return wrap(delegate.connect());
    }

    @Override
    public void close() {
        delegate.close();
    }
}
