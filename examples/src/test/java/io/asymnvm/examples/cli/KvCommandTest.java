package io.asymnvm.examples.cli;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code asymnvm kv} against a backend node started in this JVM on a free port. */
@Timeout(60)
class KvCommandTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private BackendNode node;
    private StringWriter out;
    private StringWriter err;

    @BeforeEach
    void startBackend() {
        node = BackendNode.start(BackendConfiguration.builder(dir.resolve("backend.pm")).port(0).conclude());
    }

    @AfterEach
    void stopBackend() {
        node.close();
    }

    /** Runs {@code asymnvm kv --backend ... --frontend-id 1 <args>} as {@code main} would (fresh output). */
    private int kv(String... args) {
        List<String> all = new ArrayList<>(List.of("kv", "--backend", "127.0.0.1:" + node.port(),
                "--frontend-id", "1", "--credentials", node.credentialsFile().toString()));
        all.addAll(List.of(args));
        return run(all.toArray(String[]::new));
    }

    private int run(String... args) {
        out = new StringWriter();
        err = new StringWriter();
        return CliFixture.executeAsMain(out, err, args);
    }

    @Test
    void shouldAttachWithAnExportedCredentialAndRefuseWithoutOrWithAnothers() {
        Path own = dir.resolve("fe1.credentials");
        Path other = dir.resolve("fe0.credentials");
        String backendFile = node.credentialsFile().toString();
        assertEquals(0, run("credentials", "--from", backendFile, "--frontend", "1", "--out", own.toString()),
                err.toString());
        assertTrue(out.toString().contains("mode 0600"), out.toString());
        assertEquals(0, run("credentials", "--from", backendFile, "--frontend", "0", "--out", other.toString()));
        assertEquals(1, run("credentials", "--from", backendFile, "--frontend", "0", "--out", other.toString()));
        assertTrue(err.toString().contains("exists"), err.toString());

        String at = "127.0.0.1:" + node.port();
        assertEquals(0, run("kv", "--backend", at, "--frontend-id", "1", "--credentials", own.toString(),
                "put", "k", "v"), err.toString());
        assertEquals(1, run("kv", "--backend", at, "--frontend-id", "1", "get", "k"));
        assertTrue(err.toString().contains("--credentials"), err.toString());
        assertEquals(1, run("kv", "--backend", at, "--frontend-id", "1", "--credentials", other.toString(),
                "get", "k"));
        assertTrue(err.toString().contains("no secret for frontend 1"), err.toString());
        assertEquals(0, run("kv", "--backend", at, "--frontend-id", "1", "--credentials", own.toString(),
                "get", "k"), err.toString());
        assertEquals("v", out.toString().strip());
        assertEquals(1, node.authRefusals(), "the attach without a credential was refused and counted");
    }

    @Test
    void shouldPutGetDeleteAndScan() {
        assertEquals(1, kv("get", "a"), err.toString());
        assertTrue(err.toString().contains("no key 'a' in hash map 'kv-hash'"), err.toString());
        assertEquals(0, kv("put", "a", "1"), err.toString());
        assertEquals(0, kv("get", "a"));
        assertEquals("1", out.toString().strip());
        assertEquals(0, kv("del", "a"));
        assertEquals(1, kv("del", "a"));
        assertEquals(1, kv("get", "a"));

        for (String k : List.of("c", "a", "e", "b", "d")) {
            assertEquals(0, kv("--structure", "btree", "put", k, "value of " + k), err.toString());
        }
        assertEquals(0, kv("--structure", "btree", "scan", "b", "d"), err.toString());
        assertEquals(List.of("b\tvalue of b", "c\tvalue of c", "d\tvalue of d"), out.toString().lines().toList());
        assertEquals(0, kv("--structure", "btree", "scan", "a", "z", "--limit", "2"));
        assertEquals(List.of("a\tvalue of a", "b\tvalue of b"), out.toString().lines().toList());
        assertTrue(err.toString().contains("--limit 2"), err.toString());
        assertEquals(0, kv("--structure", "btree", "scan", "x", "z"));
        assertEquals("", out.toString());
        assertEquals(0, kv("--structure", "btree", "--name", "other", "put", "k", "v"));
        assertEquals(1, kv("--structure", "btree", "get", "k"), "another name is another structure");
    }

    @Test
    void shouldLoadAndVerifyAndCatchAnOverwrite() {
        assertEquals(0, kv("load", "2000"), err.toString());
        assertTrue(out.toString().contains("loaded 2000 keys into hash map 'kv-hash'"), out.toString());
        assertEquals(0, kv("verify", "2000"), out + "\n" + err);
        assertTrue(out.toString().contains("all match"), out.toString());

        assertEquals(0, kv("put", "key1234", "tampered"));
        assertEquals(0, kv("del", "key77"));
        assertEquals(1, kv("verify", "2000"), out.toString());
        String report = out.toString();
        assertTrue(report.contains("2 of 2000 keys"), report);
        assertTrue(report.contains("key1234: expected \"value-1234-") && report.contains("found \"tampered\""),
                report);
        assertTrue(report.contains("key77: expected") && report.contains("missing"), report);

        assertEquals(0, kv("--structure", "btree", "--batch", "250", "load", "2000"), err.toString());
        assertEquals(0, kv("--structure", "btree", "verify", "2000"), out.toString());
        assertEquals(1, kv("--structure", "btree", "verify", "2001"), "key2000 was never loaded");
    }

    @Test
    void badUsageShouldExitTwoAndRuntimeFailuresOne() {
        assertEquals(2, kv("scan", "a", "b"));
        assertTrue(err.toString().contains("--structure btree"), err.toString());
        assertEquals(2, kv());
        assertEquals(2, kv("put", "a"));
        assertEquals(2, kv("get", "a", "b"));
        assertEquals(2, kv("frobnicate", "a"));
        assertEquals(2, kv("load", "many"));
        assertEquals(2, kv("verify", "0"));
        assertEquals(2, kv("--structure", "list", "get", "a"));
        assertEquals(2, kv("--batch", "0", "load", "10"));
        assertEquals(2, run("kv", "--backend", "localhost", "--frontend-id", "1", "get", "a"));
        assertEquals(2, run("kv", "--backend", "localhost:99999", "--frontend-id", "1", "get", "a"));
        assertEquals(2, run("kv", "--frontend-id", "1", "get", "a"));
        assertEquals(2, run("kv", "--backend", "127.0.0.1:" + node.port(), "get", "a"));

        assertEquals(0, kv("put", "a", "1"));
        assertEquals(1, kv("--structure", "btree", "--name", "kv-hash", "get", "a"));
        assertTrue(err.toString().startsWith("asymnvm kv: ") && err.toString().contains("'kv-hash'"),
                err.toString());
        assertEquals(1, err.toString().strip().lines().count(), err.toString());
        int closedPort = node.port();
        node.close();
        assertEquals(1, run("kv", "--backend", "127.0.0.1:" + closedPort, "--frontend-id", "1", "get", "a"));
        assertTrue(err.toString().contains("cannot connect"), err.toString());
        node = BackendNode.start(BackendConfiguration.builder(dir.resolve("backend.pm")).port(0).conclude());
    }
}
