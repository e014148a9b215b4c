package io.asymnvm.core.auth;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FrontendCredentialsTest {
    @TempDir
    Path dir;

    private static void assertContains(String text, String... parts) {
        for (String p : parts) {
            assertTrue(text.contains(p), () -> "'" + p + "' missing from: " + text);
        }
    }

    private Path write(String name, String content, String mode) throws Exception {
        Path f = dir.resolve(name);
        Files.writeString(f, content, StandardCharsets.ISO_8859_1);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(mode));
        return f;
    }

    private static String secret(int length) {
        return Base64.getEncoder().encodeToString(new byte[length]);
    }

    @Test
    void shouldHoldAReplicationSecretInNewFilesAndExplainItsAbsenceInOldOnes() throws Exception {
        Path f = dir.resolve("cluster.credentials");
        FrontendCredentials created = FrontendCredentials.createIfAbsent(f, 2);
        assertTrue(created.hasReplicationSecret());
        assertEquals(32, created.replicationSecret().length);
        assertFalse(java.util.Arrays.equals(created.replicationSecret(), created.secret(0)), "its own secret");
        assertArrayEquals(created.replicationSecret(), FrontendCredentials.load(f).replicationSecret(),
                "read back as written");
        Path exported = created.export(1, dir.resolve("one.credentials"));
        assertFalse(FrontendCredentials.load(exported).hasReplicationSecret(), "a frontend's export has none");
        Path old = write("old.credentials", "version=1\nfrontend.0=" + secret(32) + "\n", "rw-------");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FrontendCredentials.load(old).replicationSecret());
        assertContains(e.getMessage(), old.toString(), "replication");
        Path bad = write("bad.credentials", "version=1\nfrontend.0=" + secret(32) + "\nreplication=" + secret(16)
                + "\n", "rw-------");
        assertContains(assertThrows(IllegalArgumentException.class, () -> FrontendCredentials.load(bad))
                .getMessage(), "replication holds 16 bytes");
    }

    @Test
    void shouldCreateOwnerOnlySecretsOnceAndReuseThem() throws Exception {
        Path f = dir.resolve("pm.credentials");
        FrontendCredentials created = FrontendCredentials.createIfAbsent(f, 3);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
        assertEquals(Set.of(0, 1, 2), created.frontendIds());
        assertFalse(java.util.Arrays.equals(created.secret(0), created.secret(1)), "independent random secrets");
        FrontendCredentials again = FrontendCredentials.createIfAbsent(f, 5);
        assertEquals(Set.of(0, 1, 2), again.frontendIds(), "an existing file is reused, never regenerated");
        for (int id = 0; id < 3; id++) {
            assertArrayEquals(created.secret(id), again.secret(id));
        }
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count(), "no temporary file left beside it");
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> again.secret(4));
        assertContains(e.getMessage(), f.toString(), "frontend 4");
    }

    @Test
    void shouldRefuseAFileThatGroupOrOthersMayRead() throws Exception {
        Path f = dir.resolve("c");
        FrontendCredentials.createIfAbsent(f, 1);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> FrontendCredentials.load(f));
        assertContains(e.getMessage(), f.toString(), "rw-r--r--", "chmod 600");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw----r--"));
        assertThrows(IllegalArgumentException.class, () -> FrontendCredentials.createIfAbsent(f, 1));
    }

    @Test
    void shouldRefuseMalformedFilesNamingTheProblem() throws Exception {
        String[][] cases = {
            {"version=1\n", "no frontend.N secret"},
            {"frontend.0=" + secret(32) + "\n", "version is missing"},
            {"version=2\nfrontend.0=" + secret(32) + "\n", "version is '2'"},
            {"version=1\nfrontend.0=" + secret(16) + "\n", "frontend.0 holds 16 bytes, expected 32"},
            {"version=1\nfrontend.0=not*base64\n", "frontend.0 is not base64"},
            {"version=1\nfrontend.x=" + secret(32) + "\n", "frontend.x"},
            {"version=1\nsecret=" + secret(32) + "\n", "unknown key 'secret'"},
        };
        for (int i = 0; i < cases.length; i++) {
            Path f = write("bad" + i, cases[i][0], "rw-------");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> FrontendCredentials.load(f), cases[i][0]);
            assertContains(e.getMessage(), f.toString(), "malformed", cases[i][1]);
        }
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> FrontendCredentials.load(dir.resolve("absent")));
        assertContains(missing.getMessage(), "absent", "does not exist");
    }

    @Test
    void shouldExportOneFrontendsSecretToAnOwnerOnlyFile() throws Exception {
        FrontendCredentials all = FrontendCredentials.createIfAbsent(dir.resolve("all"), 4);
        Path out = all.export(2, dir.resolve("fe2"));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(out)));
        FrontendCredentials one = FrontendCredentials.load(out);
        assertEquals(Set.of(2), one.frontendIds(), "the others' secrets stay on the backend");
        assertArrayEquals(all.secret(2), one.secret(2));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> all.export(1, out));
        assertContains(e.getMessage(), out.toString(), "exists");
    }

    @Test
    void shouldBindTheProofToSecretNonceFrontendAndEpoch() {
        byte[] secret = new byte[32];
        byte[] nonce = new byte[32];
        secret[0] = 1;
        nonce[0] = 2;
        byte[] proof = AttachProof.compute(secret, nonce, 3, 4);
        assertEquals(32, proof.length);
        assertTrue(AttachProof.verify(secret, nonce, 3, 4, proof));
        byte[] otherSecret = secret.clone();
        otherSecret[31] = 9;
        byte[] otherNonce = nonce.clone();
        otherNonce[31] = 9;
        assertFalse(AttachProof.verify(otherSecret, nonce, 3, 4, proof), "another secret");
        assertFalse(AttachProof.verify(secret, otherNonce, 3, 4, proof), "another nonce");
        assertFalse(AttachProof.verify(secret, nonce, 5, 4, proof), "another frontend id");
        assertFalse(AttachProof.verify(secret, nonce, 3, 0, proof), "another expected epoch");
    }
}
