package io.asymnvm.core.fabric;

/**
 * The transport SPI (DESIGN §5): a link to one memory node over which connections post one-sided operations
 * (READ, WRITE, CAS, FLUSH) and two-sided control calls. Implementations: {@code local} (in-process),
 * {@code tcp} (emulated NIC over loopback or a LAN) and, on hosts with a device, {@code rdma}.
 */
public interface Fabric extends AutoCloseable {

    /** The implementation name: "local", "tcp" or "rdma". */
    String name();

    /** Opens a new connection; operations on one connection complete in the order they were posted. */
    FabricConnection connect();

    @Override
    void close();
}
