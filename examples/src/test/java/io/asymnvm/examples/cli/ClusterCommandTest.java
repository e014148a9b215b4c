package io.asymnvm.examples.cli;

import io.asymnvm.examples.support.ChildJvm;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code asymnvm cluster} in a child JVM: embedded ZooKeeper, backend and two SYNC mirrors; {@code LISTENING} once
 * every mirror is IN_SYNC, which {@code status --zk} then shows; closing its standard input stops it cleanly.
 */
class ClusterCommandTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private String log() {
        try {
            return java.nio.file.Files.readString(dir.resolve("cluster.log"));
        } catch (java.io.IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Test
    @Timeout(120)
    void shouldRunZooKeeperABackendAndTwoMirrorsAndStopWhenStdinCloses() throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx256m"));
        cmd.addAll(ChildJvm.inheritedJvmFlags());
        cmd.addAll(List.of("-cp", ChildJvm.classPath(), "io.asymnvm.examples.cli.AsymNvmCli", "cluster", "--dir",
                dir.toString(), "--mirrors", "2", "--lease-ms", "3000"));
        Process p = new ProcessBuilder(cmd).redirectError(dir.resolve("cluster.log").toFile()).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
                StandardCharsets.UTF_8))) {
            List<String> lines = new ArrayList<>();
            String line;
            while ((line = out.readLine()) != null && !line.startsWith("LISTENING ")) {
                lines.add(line);
            }
            assertTrue(line != null, () -> "exited before LISTENING: " + lines + "\n" + log());
            String zk = lines.stream().filter(l -> l.startsWith("ZOOKEEPER ")).findFirst().orElseThrow()
                    .substring("ZOOKEEPER ".length());
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("BACKEND b0 127.0.0.1:")), lines::toString);
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("MIRROR m1 127.0.0.1:")), lines::toString);
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("MIRROR m2 127.0.0.1:")), lines::toString);
            assertTrue(lines.contains("CONNECT --zk " + zk + " --cluster default"), lines::toString);

            StringWriter status = new StringWriter();
            CommandLine cl = new CommandLine(new AsymNvmCli());
            cl.setOut(new PrintWriter(status, true));
            assertEquals(0, cl.execute("status", "--zk", zk));
            assertTrue(status.toString().contains("epoch 1") && status.toString().contains("backend b0@")
                    && status.toString().contains("mirror m1@") && status.toString().contains("mirror m2@")
                    && status.toString().split("SYNC, IN_SYNC", -1).length == 3, status::toString);

            p.getOutputStream().close(); // end of standard input: stop
            assertEquals("STOPPED", out.readLine());
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "stopped within a minute");
            assertEquals(0, p.exitValue());
        } finally {
            p.destroyForcibly();
        }
    }
}
