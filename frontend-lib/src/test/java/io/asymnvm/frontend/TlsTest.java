package io.asymnvm.frontend;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.tcp.TcpTls;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tcp fabric over TLS (Netty's SslHandler), with authentication on as well: commits over TLS, mutual TLS that
 * refuses a client without a certificate, and a client that does not trust the server's certificate.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TlsTest {
    @TempDir
    static Path certs;

    private static Path[] server;
    private static Path[] client;
    private static Path[] stranger;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @BeforeAll
    static void certificates() throws Exception {
        server = TestCertificates.create(certs, "server");
        client = TestCertificates.create(certs, "client");
        stranger = TestCertificates.create(certs, "stranger");
    }

    private BackendNode start(TcpTls tls) {
        return BackendNode.start(BackendConfiguration.builder(dir.resolve("backend.pm")).size(64L << 20)
                .maxFrontends(2).semRingCapacity(1L << 20).redoRingCapacity(1L << 20).port(0).tls(tls).conclude());
    }

    private static AsymNvm connect(BackendNode node, TcpTls tls) {
        return AsymNvm.connect("127.0.0.1", node.port(), 0, FrontendOptions.builder()
                .credentials(node.credentialsFile()).tls(tls).reconnectTimeoutMillis(5_000).conclude());
    }

    private static void commitAndRead(AsymNvm nvm) {
        Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
        cells.create(2);
        cells.set(1, 99);
        assertEquals(99, cells.get(1));
        assertTrue(nvm.stats().lastTxId() >= 2, "committed over TLS");
    }

    @Test
    void shouldCommitOverTls() {
        try (BackendNode node = start(TcpTls.server(server[0], server[1], null));
             AsymNvm nvm = connect(node, TcpTls.client(server[0], null, null))) {
            commitAndRead(nvm);
        }
    }

    @Test
    void shouldRefuseAClientWithoutACertificateUnderMutualTls() {
        try (BackendNode node = start(TcpTls.server(server[0], server[1], client[0]))) {
            AsymNvmException none = assertThrows(AsymNvmException.class,
                    () -> connect(node, TcpTls.client(server[0], null, null)).close());
            assertEquals(ErrorCode.CONNECTION_LOST, none.errorCode(), none.getMessage());
            assertTrue(none.getMessage().contains("certificate"), "names the refusal: " + none.getMessage());
            AsymNvmException unknown = assertThrows(AsymNvmException.class,
                    () -> connect(node, TcpTls.client(server[0], stranger[0], stranger[1])).close());
            assertEquals(ErrorCode.CONNECTION_LOST, unknown.errorCode(), unknown.getMessage());
            assertTrue(unknown.getMessage().contains("certificate"), "names the refusal: " + unknown.getMessage());
            try (AsymNvm nvm = connect(node, TcpTls.client(server[0], client[0], client[1]))) {
                commitAndRead(nvm);
            }
        }
    }

    @Test
    void shouldRefuseAServerItDoesNotTrustAndBadFiles() {
        try (BackendNode node = start(TcpTls.server(server[0], server[1], null))) {
            AsymNvmException e = assertThrows(AsymNvmException.class,
                    () -> connect(node, TcpTls.client(stranger[0], null, null)).close());
            assertTrue(e.getMessage().contains("TLS handshake"), e.getMessage());
        }
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> TcpTls.server(certs.resolve("absent.crt"), server[1], null));
        assertTrue(missing.getMessage().contains("absent.crt"), missing.getMessage());
        IllegalArgumentException swapped = assertThrows(IllegalArgumentException.class,
                () -> TcpTls.server(server[1], server[0], null));
        assertTrue(swapped.getMessage().contains("cannot use TLS certificate"), swapped.getMessage());
    }
}
