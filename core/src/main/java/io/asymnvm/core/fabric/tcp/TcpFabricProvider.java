package io.asymnvm.core.fabric.tcp;

import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricProvider;

import java.net.InetSocketAddress;
import java.util.Map;

/** The {@code tcp} fabric provider: always available; takes no options; serves with a {@link TcpNicServer}. */
public final class TcpFabricProvider implements FabricProvider {

    @Override
    public String name() {
        return "tcp";
    }

    @Override
    public Availability availability() {
        return Availability.yes();
    }

    @Override
    public Fabric open(String host, int port, Map<String, String> options) {
        if (!options.isEmpty()) {
            throw new IllegalArgumentException("the tcp fabric takes no options, got " + options.keySet());
        }
        return new TcpFabric(host, port);
    }

    @Override
    public Responder serve(EmulatedNic nic, InetSocketAddress bind) {
        TcpNicServer server = new TcpNicServer(nic, bind).start();
        return Responder.of("tcp", server::port, server::close);
    }
}
