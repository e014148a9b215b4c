package io.asymnvm.core.fabric;

import io.asymnvm.core.fabric.tcp.TcpTransport;
import org.junit.jupiter.api.Timeout;

/**
 * The tcp fabric contract with the server's loops and the client's reply-reading loop polling after their events, as
 * for SPIN callers ({@code TcpTransport}), on the default transport (epoll where it loads).
 */
@Timeout(60)
class TcpFabricSpinContractTest extends TcpFabricContractTest {
    @Override
    protected TcpTransport transport() {
        return TcpTransport.of(TcpTransport.Kind.AUTO, 200, 200);
    }

    @Override
    protected boolean spinningClient() {
        return true;
    }
}
