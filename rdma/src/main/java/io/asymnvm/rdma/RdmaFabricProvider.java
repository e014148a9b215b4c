package io.asymnvm.rdma;

import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricProvider;

import java.net.InetSocketAddress;
import java.util.Map;

/**
 * The {@code rdma} fabric provider, registered as a service: available where {@link RdmaProbe} finds libdisni and a
 * device. Options: see {@link RdmaOptions} ({@code depth}, {@code staging-slots}, {@code slot-bytes},
 * {@code connect-timeout-ms}), all validated before DiSNI is touched.
 */
public final class RdmaFabricProvider implements FabricProvider {

    @Override
    public String name() {
        return "rdma";
    }

    @Override
    public Availability availability() {
        RdmaProbe.Result r = RdmaProbe.probe();
        return r.available() ? Availability.yes() : Availability.no(r.reason());
    }

    @Override
    public Fabric open(String host, int port, Map<String, String> options) {
        return new RdmaFabric(host, port, RdmaOptions.parse(options));
    }

    /** Starts an {@link RdmaNicServer} with the default registration policy and options. */
    @Override
    public Responder serve(EmulatedNic nic, InetSocketAddress bind) {
        RdmaNicServer server = new RdmaNicServer(nic, bind).start();
        return Responder.of("rdma", server::port, server::close);
    }
}
