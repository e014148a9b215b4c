package io.asymnvm.examples.cli;

import java.io.IOException;
import java.io.InputStream;

/**
 * How a drill's child process ({@code drill-backend}, {@code drill-node}, {@code drill-zookeeper}) learns that the
 * drill that started it is gone: the drill writes nothing to the child's standard input and the stream ends when
 * the drill closes it or dies.
 */
final class DrillStdin {
    private DrillStdin() {
    }

    /** Blocks until standard input ends. */
    static void awaitEnd() throws IOException {
        try (InputStream in = System.in) {
            while (in.read() >= 0) {
                // the drill writes nothing; wait for the end of the stream
            }
        }
    }

    /**
     * Starts a daemon thread named {@code threadName} that waits for the end of standard input (a read failure
     * counts as the end) and then exits the JVM with status 0, which runs the shutdown hooks (the node's clean
     * close).
     */
    static void exitAtEnd(String threadName) {
        Thread watch = new Thread(() -> {
            try {
                awaitEnd();
            } catch (IOException e) {
                // the same as the end of the stream
            }
            System.exit(0);
        }, threadName);
        watch.setDaemon(true);
        watch.start();
    }
}
