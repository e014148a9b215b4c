package io.asymnvm.core.fabric;

import io.asymnvm.core.fabric.tcp.TcpTransport;
import org.junit.jupiter.api.Timeout;

/** The tcp fabric contract on NIO, the fall-back where native epoll does not load; loops block at once. */
@Timeout(60)
class TcpFabricNioContractTest extends TcpFabricContractTest {
    @Override
    protected TcpTransport transport() {
        return TcpTransport.of(TcpTransport.Kind.NIO, 0, 0);
    }
}
