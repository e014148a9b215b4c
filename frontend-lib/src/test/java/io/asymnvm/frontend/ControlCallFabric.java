package io.asymnvm.frontend;

import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.ForwardingConnection;
import io.asymnvm.core.fabric.ForwardingFabric;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** A fabric whose control calls pass through a test's interceptor (to lose a request or a reply, or crash). */
public final class ControlCallFabric extends ForwardingFabric {
    /** Decides what one control call does; {@code next} is the real connection. */
    public interface Interceptor {
        Completion call(int kind, byte[] request, FabricConnection next);
    }

    private final Interceptor interceptor;

    public ControlCallFabric(Fabric delegate, Interceptor interceptor) {
        super(delegate);
        this.interceptor = interceptor;
    }

    @Override
    protected FabricConnection wrap(FabricConnection connection) {
        return new ForwardingConnection(connection) {
            @Override
            public Completion call(byte[] request) {
                int kind = ByteBuffer.wrap(request).order(ByteOrder.LITTLE_ENDIAN).getInt(0);
                return interceptor.call(kind, request, delegate());
            }
        };
    }
}
