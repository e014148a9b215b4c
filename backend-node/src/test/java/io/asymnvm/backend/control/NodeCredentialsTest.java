package io.asymnvm.backend.control;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendFixture;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.auth.FrontendCredentials;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Secure by default: a node serving tcp creates its credentials file once, reuses it, and refuses a bad one. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NodeCredentialsTest {
    @TempDir
    Path dir;

    private Path pm() {
        return dir.resolve("node.pm");
    }

    private Path credentials() {
        return dir.resolve("node.pm.credentials");
    }

    @Test
    void shouldCreateTheFileBesideThePmFileAtFirstStartAndReuseItAtRestart() {
        byte[] first;
        try (BackendNode node = BackendNode.start(BackendFixture.config(pm()).port(0).conclude())) {
            assertEquals(credentials(), node.credentialsFile());
            FrontendCredentials c = FrontendCredentials.load(credentials());
            assertEquals(Set.of(0, 1), c.frontendIds(), "a secret per frontend id of the image");
            first = c.secret(1);
        }
        assertOwnerOnly();
        try (BackendNode node = BackendNode.start(BackendFixture.config(pm()).port(0).conclude());
             TcpFabric fabric = new TcpFabric("127.0.0.1", node.port()); FabricConnection c = fabric.connect()) {
            assertArrayEquals(first, FrontendCredentials.load(credentials()).secret(1), "reused, not regenerated");
            assertTrue(BackendFixture.attach(node, c, 1).attachEpoch() > 0, "the old secret still attaches");
        }
    }

    private void assertOwnerOnly() {
        try {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(credentials())));
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void shouldRefuseToStartOnAWorldReadableOrMalformedFileBeforeMappingAnything() throws Exception {
        BackendNode.start(BackendFixture.config(pm()).port(0).conclude()).close();
        Files.setPosixFilePermissions(credentials(), PosixFilePermissions.fromString("rw-r--r--"));
        IllegalArgumentException open = assertThrows(IllegalArgumentException.class,
                () -> BackendNode.start(BackendFixture.config(pm()).port(0).conclude()));
        assertTrue(open.getMessage().contains(credentials().toString()) && open.getMessage().contains("chmod 600"),
                open.getMessage());
        assertFalse(Files.exists(BackendFixture.markFile(pm())), "refused before the image was opened");

        Files.setPosixFilePermissions(credentials(), PosixFilePermissions.fromString("rw-------"));
        Files.writeString(credentials(), "version=1\nfrontend.0=short\n");
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> BackendNode.start(BackendFixture.config(pm()).port(0).conclude()));
        assertTrue(bad.getMessage().contains(credentials().toString()) && bad.getMessage().contains("malformed"),
                bad.getMessage());
    }

    @Test
    void shouldNeedNoCredentialsEmbeddedOrWhenInsecure() {
        try (BackendNode node = BackendFixture.start(pm())) {
            assertNull(node.credentialsFile(), "the local fabric needs none");
        }
        try (BackendNode node = BackendNode.start(BackendFixture.config(pm()).port(0).insecure(true).conclude());
             TcpFabric fabric = new TcpFabric("127.0.0.1", node.port()); FabricConnection c = fabric.connect()) {
            assertNull(node.credentialsFile());
            assertTrue(BackendFixture.attach(c, 1).attachEpoch() > 0, "attach without a proof");
        }
        assertFalse(Files.exists(credentials()), "neither created a credentials file");
        IllegalArgumentException both = assertThrows(IllegalArgumentException.class, () -> BackendConfiguration
                .builder(pm()).port(0).insecure(true).credentials(dir.resolve("x")).conclude());
        assertTrue(both.getMessage().contains("insecure"), both.getMessage());
    }
}
