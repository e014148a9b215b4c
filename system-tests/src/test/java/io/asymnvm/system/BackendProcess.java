package io.asymnvm.system;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A backend node running as a separate JVM ({@code io.asymnvm.backend.BackendMain}) on loopback, started with
 * this test JVM's class path. {@link #kill()} sends SIGKILL; {@link #stop()} SIGTERM (clean shutdown).
 */
final class BackendProcess {
    private final Process process;
    private final int port;

    private BackendProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts a backend and waits (bounded) until it prints its LISTENING line. */
    static BackendProcess start(Path pm, String size, int port, Path log) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        cmd.add("-cp");
        cmd.add(System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
        cmd.add("io.asymnvm.backend.BackendMain");
        cmd.add("--pm");
        cmd.add(pm.toString());
        cmd.add("--size");
        cmd.add(size);
        cmd.add("--port");
        cmd.add(Integer.toString(port));
        try {
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
            CompletableFuture<Boolean> listening = CompletableFuture.supplyAsync(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        if (line.startsWith("LISTENING ")) {
                            return true;
                        }
                    }
                    return false;
                } catch (IOException e) {
                    return false;
                }
            });
            boolean ok;
            try {
                ok = listening.get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                ok = false;
            }
            if (!ok) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new IllegalStateException("backend did not start on port " + port + " (exit "
                        + (p.isAlive() ? "alive" : p.exitValue()) + "); log tail:\n" + tail(log));
            }
            return new BackendProcess(p, port);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String tail(Path log) {
        try {
            List<String> lines = java.nio.file.Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    int port() {
        return port;
    }

    long pid() {
        return process.pid();
    }

    /** SIGKILL, then wait for the process to be gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("backend " + process.pid() + " survived SIGKILL");
        }
    }

    /** SIGTERM (clean shutdown); returns the exit code. */
    int stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new IllegalStateException("backend " + process.pid() + " ignored SIGTERM");
        }
        return process.exitValue();
    }

    /** Kills the process if it is still running. */
    void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
