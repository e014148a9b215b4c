package io.asymnvm.frontend;

import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.ForwardingConnection;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** A fabric whose control calls pass through a test's interceptor (to lose a request or a reply, or crash). */
public final class ControlCallFabric implements Fabric {
    /** Decides what one control call does; {@code next} is the real connection. */
    public interface Interceptor {
        Completion call(int kind, byte[] request, FabricConnection next);
    }

    private final Fabric delegate;
    private final Interceptor interceptor;

    public ControlCallFabric(Fabric delegate, Interceptor interceptor) {
        this.delegate = delegate;
        this.interceptor = interceptor;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public FabricConnection connect() {
        return new ForwardingConnection(delegate.connect()) {
            @Override
            public Completion call(byte[] request) {
                int kind = ByteBuffer.wrap(request).order(ByteOrder.LITTLE_ENDIAN).getInt(0);
                return interceptor.call(kind, request, delegate());
            }
        };
    }

    @Override
    public void close() {
        delegate.close();
    }
}
