package io.asymnvm.examples.drill;

import io.asymnvm.examples.support.ChildJvm;


import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingDeque;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.TimeUnit;

/**
 * The {@code asymnvm} command line running in a child JVM: the current {@code java} binary, this JVM's class path
 * and module flags, {@code io.asymnvm.examples.cli.AsymNvmCli} and the given arguments. Standard error is
 * appended to a log file; standard output is read by a daemon thread into a queue of lines, which
 * {@link #nextLine(long)} hands out with a deadline, so the parent never blocks without bound on a child. A last
 * line the child did not finish (no newline: killed while writing) is reported as {@link Line#partial()}.
 *
 * <p>{@link #kill()} sends SIGKILL to this child's PID only (through its {@link ProcessHandle}); {@link #stop}
 * sends SIGTERM. The parent's end of the child's standard input stays open while the child runs; the drill's
 * children exit when it closes (the parent died), so none outlives a killed drill.
 */
final class CliProcess implements AutoCloseable {
    static final String MAIN_CLASS = "io.asymnvm.examples.cli.AsymNvmCli";
    private static final Line EOF = new Line(null, false, 0);
    private static final int LOG_TAIL_LINES = 15;
    private static final long EXIT_WAIT_SECONDS = 10;

    /**
     * One line of the child's standard output; {@code text} null at end of stream. {@code readMillis}: wall-clock
     * time the reader thread took it from the pipe, which is when it was printed give or take a scheduling delay,
     * however long it then waits in the queue.
     */
    record Line(String text, boolean partial, long readMillis) {
        boolean eof() {
            return text == null;
        }
    }

    private final String name;
    private final Process process;
    private final Path log;
    private final Path transcript;
    private final BlockingDeque<Line> lines = new LinkedBlockingDeque<>();
    private final long startedNanos;
    private boolean eof;

    private CliProcess(String name, Process process, Path log, Path transcript, long startedNanos) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.transcript = transcript;
        this.startedNanos = startedNanos;
        Thread reader = new Thread(this::pump, "asymnvm-drill-" + name + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts {@code asymnvm args...} in a new JVM; {@code log} receives its standard error (appended), and
     * {@code transcript}, unless null, every line of its standard output.
     */
    static CliProcess start(String name, List<String> args, Path log, Path transcript) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        cmd.add("-XX:+UseSerialGC");
        cmd.addAll(ChildJvm.inheritedJvmFlags());
        cmd.add("-cp");
        cmd.add(ChildJvm.classPath());
        cmd.add(MAIN_CLASS);
        cmd.addAll(args);
        try {
            Files.writeString(log, "=== " + name + ": " + String.join(" ", args) + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            long started = System.nanoTime();
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            return new CliProcess(name, p, log, transcript, started);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + " (" + cmd.get(0) + ")", e);
        }
    }

    private void pump() {
        try (InputStream in = process.getInputStream()) {
            StringBuilder b = new StringBuilder();
            int c;
            while ((c = in.read()) >= 0) {
                if (c == '\n') {
                    if (transcript != null) {
                        Files.writeString(transcript, b + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                                StandardOpenOption.APPEND);
                    }
                    lines.add(new Line(b.toString(), false, System.currentTimeMillis()));
                    b.setLength(0);
                } else {
                    b.append((char) c);
                }
            }
            if (b.length() > 0) {
                lines.add(new Line(b.toString(), true, System.currentTimeMillis()));
            }
        } catch (IOException e) {
            // the stream closes when the child dies: end of lines either way
        } finally {
            lines.add(EOF);
        }
    }

    String name() {
        return name;
    }

    long pid() {
        return process.pid();
    }

    /** Nanos since the child was spawned. */
    long nanosSinceStart() {
        return System.nanoTime() - startedNanos;
    }

    /**
     * The next line of standard output, waiting at most until {@code deadlineNanos} ({@link System#nanoTime()});
     * the end of the stream is a line whose {@link Line#eof()} is true (returned again on every later call).
     *
     * @throws DrillFailure if the deadline passes first
     */
    Line nextLine(long deadlineNanos) {
        if (eof) {
            return EOF;
        }
        try {
            Line l = lines.poll(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (l == null) {
                throw new DrillFailure(name + " (pid " + pid() + ") printed nothing before the deadline"
                        + logTail());
            }
            eof = l.eof();
            return l;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DrillFailure("interrupted while waiting for " + name);
        }
    }

    /**
     * Whether the child prints something (or ends) within {@code nanos}; what it printed stays queued for
     * {@link #nextLine(long)}.
     */
    boolean outputWithin(long nanos) {
        if (eof) {
            return true;
        }
        try {
            Line l = lines.poll(nanos, TimeUnit.NANOSECONDS);
            if (l == null) {
                return false;
            }
            lines.offerFirst(l);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DrillFailure("interrupted while waiting for " + name);
        }
    }

    /** Writes one line to the child's standard input. */
    void send(String line) {
        try {
            OutputStream out = process.getOutputStream();
            out.write((line + "\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
        } catch (IOException e) {
            throw new DrillFailure("cannot write to " + name + " (pid " + pid() + "): " + e.getMessage()
                    + logTail());
        }
    }

    boolean alive() {
        return process.isAlive();
    }

    /**
     * SIGKILL to this child's PID, then waits until it is gone. Signals through its {@link ProcessHandle}:
     * {@link Process#destroyForcibly()} would also close our end of the child's standard output and drop the lines
     * still in the pipe, which the drill must read (an acknowledgement printed just before the kill counts).
     */
    void kill() {
        process.toHandle().destroyForcibly();
        awaitGone();
    }

    /** SIGTERM to this child's PID; returns its exit code, SIGKILL after {@code seconds}. */
    int stop(long seconds) {
        process.toHandle().destroy();
        try {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                kill();
                throw new DrillFailure(name + " (pid " + pid() + ") ignored SIGTERM for " + seconds + " s; killed"
                        + logTail());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill();
        }
        return process.exitValue();
    }

    /** Waits for the child to exit by itself until {@code deadlineNanos}; returns its exit code. */
    int awaitExit(long deadlineNanos) {
        try {
            if (!process.waitFor(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                kill();
                throw new DrillFailure(name + " (pid " + pid() + ") did not exit before the deadline; killed"
                        + logTail());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill();
            throw new DrillFailure("interrupted while waiting for " + name + " to exit");
        }
        closeInput();
        return process.exitValue();
    }

    private void awaitGone() {
        try {
            if (!process.waitFor(EXIT_WAIT_SECONDS, TimeUnit.SECONDS)) {
                throw new DrillFailure(name + " (pid " + pid() + ") survived SIGKILL for " + EXIT_WAIT_SECONDS
                        + " s");
            }
            closeInput();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Closes our end of the child's standard input once it is gone (one pipe per incarnation otherwise leaks). */
    private void closeInput() {
        try {
            process.getOutputStream().close();
        } catch (IOException e) {
            // already broken: nothing to release
        }
    }

    /** The last lines of the child's log, prefixed for appending to a message; empty if there are none. */
    String logTail() {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            List<String> tail = all.subList(Math.max(0, all.size() - LOG_TAIL_LINES), all.size());
            return tail.isEmpty() ? "" : "; log " + log.getFileName() + " ends:\n    " + String.join("\n    ", tail);
        } catch (IOException | UncheckedIOException e) {
            return "";
        }
    }

    /** Kills the child if it still runs. */
    @Override
    public void close() {
        if (process.isAlive()) {
            kill();
        }
    }
}
