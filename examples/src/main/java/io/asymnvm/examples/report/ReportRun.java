package io.asymnvm.examples.report;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The parameters a {@link ReportWorkload} runs with.
 *
 * @param seconds          length of the timed phase, in seconds (fractions allowed; more than 0)
 * @param warmupSeconds    length of an untimed warm-up before it (0 for none)
 * @param threads          client threads (at least 1)
 * @param records          size of the data set the workload loads before it starts (keys, accounts, subscribers)
 * @param scratchDirectory an existing directory the workload may create files in (PM images, MapDB files);
 *                         deleted by the report after the row
 * @param seed             seed of every random choice, so a row can be run again
 */
public record ReportRun(double seconds, double warmupSeconds, int threads, int records, Path scratchDirectory,
                        long seed) {
    public ReportRun {
        if (!(seconds > 0) || seconds > 3600) {
            throw new IllegalArgumentException("report run seconds out of range (0, 3600]: " + seconds);
        }
        if (!(warmupSeconds >= 0) || warmupSeconds > 3600) {
            throw new IllegalArgumentException("report warm-up seconds out of range [0, 3600]: " + warmupSeconds);
        }
        if (threads < 1 || threads > 1024) {
            throw new IllegalArgumentException("report threads out of range [1, 1024]: " + threads);
        }
        if (records < 1) {
            throw new IllegalArgumentException("report records must be at least 1: " + records);
        }
        Objects.requireNonNull(scratchDirectory, "scratchDirectory");
    }

    /** The same run with another thread count. */
    public ReportRun withThreads(int newThreads) {
        return new ReportRun(seconds, warmupSeconds, newThreads, records, scratchDirectory, seed);
    }
}
