package io.asymnvm.core.fabric;

import java.net.InetSocketAddress;
import java.util.Map;

/**
 * Makes fabrics of one kind, found by name through {@link java.util.ServiceLoader} (DESIGN §5, §7): {@code local}
 * and {@code tcp} are in core, {@code rdma} in the {@code asymnvm-rdma} module, which is loaded only when selected.
 * Select through {@link FabricProviders}, which falls back from an unavailable {@code rdma} to {@code tcp}.
 * Implementations are stateless and thread-safe; {@link #availability()} never throws.
 */
public interface FabricProvider {

    /** The fabric's name as users select it: "local", "tcp" or "rdma". */
    String name();

    /** Whether this JVM can use the fabric, and if not why (for the fallback warning and strict refusals). */
    Availability availability();

    /**
     * Opens a fabric to the memory node at {@code host:port}. {@code options} are provider-specific
     * ({@code local} takes {@code dir} and {@code size}; {@code rdma} takes the keys named in its provider);
     * an unknown option is refused with {@link IllegalArgumentException} naming it.
     */
    Fabric open(String host, int port, Map<String, String> options);

    /**
     * Starts this fabric's responder for a memory node's {@code nic} on {@code bind} (port 0: any free port). The
     * {@code local} fabric has none: it is reached in-process.
     */
    default Responder serve(EmulatedNic nic, InetSocketAddress bind) {
        throw new UnsupportedOperationException("the " + name() + " fabric has no network responder");
    }

    /** A running responder (the node side of a fabric); {@link #close()} stops it. */
    interface Responder extends AutoCloseable {
        String fabric();

        int port();

        @Override
        void close();

        /** A responder of {@code fabric} whose port and close are the given server's. */
        static Responder of(String fabric, java.util.function.IntSupplier port, Runnable close) {
            return new Responder() {
                @Override
                public String fabric() {
                    return fabric;
                }

                @Override
                public int port() {
                    return port.getAsInt();
                }

                @Override
                public void close() {
                    close.run();
                }
            };
        }
    }

    /** Whether a fabric can be used here; {@code reason} says why not (empty when available). */
    record Availability(boolean available, String reason) {
        private static final Availability YES = new Availability(true, "");

        public static Availability yes() {
            return YES;
        }

        public static Availability no(String reason) {
            return new Availability(false, reason);
        }
    }
}
