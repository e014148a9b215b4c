package io.asymnvm.core.fabric;

import java.util.Objects;

/**
 * A {@link FabricConnection} that passes every operation to another one; subclasses override what they change
 * (fault injection, gating, counting). Thread safety and ordering are the delegate's.
 */
public abstract class ForwardingConnection implements FabricConnection {
    private final FabricConnection delegate;

    protected ForwardingConnection(FabricConnection delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    protected final FabricConnection delegate() {
        return delegate;
    }

    @Override
    public Completion read(int regionId, long offset, int length) {
        return delegate.read(regionId, offset, length);
    }

    @Override
    public Completion write(int regionId, long offset, byte[] data, int dataOffset, int length) {
        return delegate.write(regionId, offset, data, dataOffset, length);
    }

    @Override
    public Completion compareAndSwap(int regionId, long offset, long expected, long update) {
        return delegate.compareAndSwap(regionId, offset, expected, update);
    }

    @Override
    public Completion flush(long stamp, boolean stamped) {
        return delegate.flush(stamp, stamped);
    }

    @Override
    public Completion call(byte[] request) {
        return delegate.call(request);
    }

    @Override
    public FabricCounters counters() {
        return delegate.counters();
    }

    @Override
    public boolean isOpen() {
        return delegate.isOpen();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
