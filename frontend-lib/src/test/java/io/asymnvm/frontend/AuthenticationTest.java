package io.asymnvm.frontend;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.auth.AttachProof;
import io.asymnvm.core.auth.FrontendCredentials;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The authentication matrix over tcp (issue 10): while frontend 0 commits, peers that reach the port try to attach
 * as frontend 0 without a credential, with a wrong one, with frontend 1's, and by replaying a captured
 * challenge response. Each is refused with its typed code and counted, and frontend 0 keeps its session (no
 * reconnect, not fenced) and keeps committing.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AuthenticationTest {
    private static final int VICTIM = 0;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private BackendNode node;
    private TcpFabric attacker;
    private FrontendCredentials credentials;

    @BeforeEach
    void start() {
        node = BackendNode.start(BackendConfiguration.builder(dir.resolve("backend.pm")).size(64L << 20)
                .maxFrontends(2).semRingCapacity(1L << 20).redoRingCapacity(1L << 20).port(0).conclude());
        credentials = FrontendCredentials.load(node.credentialsFile());
        attacker = new TcpFabric("127.0.0.1", node.port());
    }

    @AfterEach
    void stop() {
        attacker.close();
        node.close();
    }

    private AsymNvm victim() {
        return AsymNvm.connect("127.0.0.1", node.port(), VICTIM,
                FrontendOptions.builder().credentials(node.credentialsFile()).conclude());
    }

    /** Runs {@code attempt}, which must fail with {@code code}, and checks it was counted once. */
    private void refused(ErrorCode code, String what, Runnable attempt) {
        long before = node.authRefusals();
        AsymNvmException e = assertThrows(AsymNvmException.class, attempt::run, what);
        assertEquals(code, e.errorCode(), what + ": " + e.getMessage());
        assertEquals(before + 1, node.authRefusals(), what + " is counted once");
    }

    private static byte[] challenge(FabricConnection c, int frontendId) {
        return c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_CHALLENGE, frontendId, 0)).await()
                .bytes();
    }

    private static byte[] attachWith(byte[] secret, byte[] nonce, int frontendId) {
        return ControlMessageLayout.authenticatedAttachRequest(frontendId, 0, null,
                AttachProof.compute(secret, nonce, frontendId, 0));
    }

    @Test
    void shouldRefuseEveryForgedAttachAndKeepTheLegitimateFrontendCommitting() {
        try (AsymNvm nvm = victim()) {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            cells.create(4);
            cells.set(0, 10);
            long epoch = node.frontendLog(VICTIM).currentEpoch();

            try (FabricConnection c = attacker.connect()) {
                refused(ErrorCode.AUTH_REQUIRED, "attach without a credential", () -> c.call(
                        ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, VICTIM, 0)).await());
                refused(ErrorCode.AUTH_REQUIRED, "slab grant before attaching", () -> c.call(
                        ControlMessageLayout.request(ControlMessageLayout.KIND_GRANT_SLAB, VICTIM, 0)).await());
                AsymNvmException write = assertThrows(AsymNvmException.class, () -> c.write(
                        RegionIds.redo(VICTIM), 0, new byte[64], 0, 64).await());
                assertEquals(ErrorCode.NOT_ATTACHED, write.errorCode(), "no grant without an attach");

                byte[] wrong = new byte[FrontendCredentials.SECRET_LENGTH];
                new Random(7).nextBytes(wrong);
                refused(ErrorCode.AUTH_FAILED, "attach with a wrong secret",
                        () -> c.call(attachWith(wrong, challenge(c, VICTIM), VICTIM)).await());
                refused(ErrorCode.AUTH_FAILED, "attach with frontend 1's secret",
                        () -> c.call(attachWith(credentials.secret(1), challenge(c, VICTIM), VICTIM)).await());
                refused(ErrorCode.AUTH_FAILED, "proof without a challenge",
                        () -> c.call(attachWith(credentials.secret(VICTIM), new byte[32], VICTIM)).await());
            }

            // a proof captured on one connection is worth nothing on another, even with a challenge pending there
            try (FabricConnection observed = attacker.connect(); FabricConnection replayer = attacker.connect()) {
                byte[] captured = attachWith(credentials.secret(VICTIM), challenge(observed, VICTIM), VICTIM);
                challenge(replayer, VICTIM);
                refused(ErrorCode.AUTH_FAILED, "replay on another connection",
                        () -> replayer.call(captured).await());
            }
            // and a challenge serves one attach: the same response again on its own connection is refused
            try (FabricConnection other = attacker.connect()) {
                byte[] request = attachWith(credentials.secret(1), challenge(other, 1), 1);
                AttachReply ok = AttachReply.decode(other.call(request).await().bytes());
                assertTrue(ok.attachEpoch() > 0, "frontend 1 attaches with its own proof");
                refused(ErrorCode.AUTH_FAILED, "second use of one challenge", () -> other.call(request).await());
            }

            assertEquals(7, node.authRefusals(), "every refusal counted");
            assertEquals(epoch, node.frontendLog(VICTIM).currentEpoch(), "no refused peer moved frontend 0's epoch");
            cells.set(1, 11);
            cells.add(0, 2, 3);
            assertEquals(7, cells.get(0));
            assertEquals(3, cells.get(2));
            assertEquals(0, nvm.stats().reconnects(), "frontend 0 kept its session: never fenced");
        }
        try (AsymNvm again = victim()) {
            Cells cells = again.transactional(Cells.class, new Cells.Impl());
            again.recover();
            assertEquals(11, cells.get(1), "the commits after the attacks are durable");
        }
    }

    @Test
    void shouldRefuseAFrontendWithoutCredentialsAndNameTheFix() {
        AsymNvmException e = assertThrows(AsymNvmException.class,
                () -> AsymNvm.connect("127.0.0.1", node.port(), VICTIM, FrontendOptions.defaults()));
        assertEquals(ErrorCode.AUTH_REQUIRED, e.errorCode());
        assertTrue(e.getMessage().contains("--credentials"), e.getMessage());
        assertEquals(1, node.authRefusals());
    }

    @Test
    void shouldReAuthenticateOnReconnectAfterABackendRestart() {
        try (AsymNvm nvm = victim()) {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            cells.create(2);
            cells.set(0, 5);
            int port = node.port();
            node.close();
            node = BackendNode.start(BackendConfiguration.builder(dir.resolve("backend.pm")).port(port).conclude());
            cells.set(1, 6); // reconnects: a fresh challenge answered with the same secret
            assertEquals(1, nvm.stats().reconnects());
            assertEquals(0, node.authRefusals());
            assertEquals(5, cells.get(0));
        }
    }

    @Test
    void shouldAttachWithoutCredentialsWhenInsecureAndSayItInTheLog() {
        stop();
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            node = BackendNode.start(BackendConfiguration.builder(dir.resolve("open.pm")).size(64L << 20)
                    .maxFrontends(2).semRingCapacity(1L << 20).redoRingCapacity(1L << 20).port(0).insecure(true)
                    .conclude());
        } finally {
            System.setErr(err);
        }
        attacker = new TcpFabric("127.0.0.1", node.port());
        String log = captured.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("WARN") && log.contains("authentication is OFF"), log);
        assertNull(node.credentialsFile());
        assertTrue(Files.notExists(dir.resolve("open.pm.credentials")), "no credentials file when insecure");
        try (AsymNvm nvm = AsymNvm.connect("127.0.0.1", node.port(), VICTIM, FrontendOptions.defaults())) {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            cells.create(1);
            cells.set(0, 42);
            assertEquals(42, cells.get(0));
        }
        assertEquals(0, node.authRefusals());
    }
}
