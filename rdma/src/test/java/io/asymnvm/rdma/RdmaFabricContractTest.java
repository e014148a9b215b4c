package io.asymnvm.rdma;

import io.asymnvm.core.fabric.Access;
import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricContractTest;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

import java.net.InetSocketAddress;

/**
 * The fabric contract over rdma: the same tests {@code local} and {@code tcp} pass, against an {@link RdmaNicServer}
 * on a real device. <b>Runs only where {@link RdmaProbe} finds libdisni and an RDMA device; on the build machine
 * (no RDMA in the kernel, no libdisni) every test of this class is skipped.</b> The address must belong to an
 * RDMA-capable interface (RoCE or IPoIB; the connection manager does not serve loopback):
 * {@code LD_LIBRARY_PATH=/usr/local/lib mvn verify -pl rdma -am -Dasymnvm.rdma.host=10.0.0.5}.
 */
@Timeout(60)
@EnabledIf("io.asymnvm.rdma.RdmaProbe#isAvailable")
class RdmaFabricContractTest extends FabricContractTest {
    private RdmaNicServer server;

    @Override
    protected Fabric createFabric(EmulatedNic nic) {
        String host = System.getProperty("asymnvm.rdma.host", "127.0.0.1");
        // the contract's read-write window is writable remotely, its read-only window (the "heap") is not
        server = new RdmaNicServer(nic, new InetSocketAddress(host, 0),
                id -> id == RW ? Access.READ_WRITE : Access.READ, RdmaOptions.defaults()).start();
        return new RdmaFabric(host, server.port(), RdmaOptions.defaults());
    }

    @Override
    protected void stopTransport() {
        if (server != null) {
            server.close();
        }
    }
}
