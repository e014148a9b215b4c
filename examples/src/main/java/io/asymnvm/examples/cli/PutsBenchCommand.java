package io.asymnvm.examples.cli;

import io.asymnvm.core.Sizes;
import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.putbench.PutsBenchConfig;
import io.asymnvm.examples.putbench.PutsBenchReport;
import io.asymnvm.examples.putbench.PutsBenchRun;
import io.asymnvm.examples.support.ScratchDirectory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code asymnvm bench puts}: durable one-put transactions on a persistent hash map against, in the same run and on
 * the same file system, the raw append + force floor and MapDB with a commit per put (see {@link PutsBenchRun}), and
 * the backend's PM bytes persisted per logical byte. Every option is checked before anything is created. With
 * {@code --json}, standard output is exactly one JSON object; progress lines go to standard error.
 */
@Command(name = "puts", mixinStandardHelpOptions = true,
        description = "Durable puts (one SYNC transaction each) vs. the append+force floor and MapDB, same run.")
public final class PutsBenchCommand implements Callable<Integer> {
    static final int MAX_VALUE_SIZE = 64 << 10;
    static final int MAX_THREADS = 256;
    static final int MAX_SECONDS = 3600;
    static final int MAX_KEYS = 10_000_000;
    static final long MAX_PM_BYTES = 1L << 40;

    @Spec
    CommandSpec spec;

    @Option(names = "--fabric", defaultValue = "local", converter = FabricKind.Converter.class,
            completionCandidates = FabricKind.Names.class,
            description = "Fabric: ${COMPLETION-CANDIDATES}. Default: ${DEFAULT-VALUE}.")
    FabricKind fabric;

    @Option(names = "--value-size", defaultValue = "1024",
            description = "Value bytes per put (1.." + MAX_VALUE_SIZE + "). Default: ${DEFAULT-VALUE}.")
    int valueSize;

    @Option(names = "--threads", defaultValue = "1",
            description = "Threads putting (1.." + MAX_THREADS + "). Default: ${DEFAULT-VALUE}.")
    int threads;

    @Option(names = "--seconds", defaultValue = "10",
            description = "Measured seconds per target (1.." + MAX_SECONDS + "). Default: ${DEFAULT-VALUE}.")
    int seconds;

    @Option(names = "--warmup-seconds", defaultValue = "2",
            description = "Unmeasured seconds per target first (0.." + MAX_SECONDS + "). Default: ${DEFAULT-VALUE}.")
    int warmupSeconds;

    @Option(names = "--keys", description = "Keys chosen uniformly (1.." + MAX_KEYS + "). Default: 10000, or "
            + PutsBenchConfig.HOT_KEYS + " with --hot-keys.")
    Integer keys;

    @Option(names = "--hot-keys", description = "Put only " + PutsBenchConfig.HOT_KEYS
            + " keys (shows how repeated writes to the same addresses cost).")
    boolean hotKeys;

    @Option(names = "--pm-dir", description = "Directory of the PM file, the floor's file and MapDB's files "
            + "(one file system for all three). Default: /dev/shm when writable, else java.io.tmpdir.")
    Path pmDir;

    @Option(names = "--pm-size", description = "Backend PM image size (e.g. 1g; 128m..1t, and within the free "
            + "space of --pm-dir). Default: from keys and value size, at least 512m.")
    String pmSize;

    @Option(names = "--json", description = "Print one JSON object (ops_per_s, floor_ops_per_s, mapdb_ops_per_s, "
            + "ratio_floor, ratio_mapdb, p50_us, p99_us, pm_bytes_per_logical_byte, ...).")
    boolean json;

    @Override
    public Integer call() {
        requireRange("--value-size", valueSize, 1, MAX_VALUE_SIZE);
        requireRange("--threads", threads, 1, MAX_THREADS);
        requireRange("--seconds", seconds, 1, MAX_SECONDS);
        requireRange("--warmup-seconds", warmupSeconds, 0, MAX_SECONDS);
        if (hotKeys && keys != null && keys != PutsBenchConfig.HOT_KEYS) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--keys': " + keys
                    + " contradicts --hot-keys, which puts " + PutsBenchConfig.HOT_KEYS + " keys");
        }
        int keyCount = keys != null ? keys : hotKeys ? PutsBenchConfig.HOT_KEYS : 10_000;
        requireRange("--keys", keyCount, 1, MAX_KEYS);
        Path dir = pmDir != null ? pmDir : ScratchDirectory.base();
        if (!Files.isDirectory(dir) || !Files.isWritable(dir)) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--pm-dir': " + dir
                    + " is not a writable directory");
        }
        long pm = PutsBenchConfig.defaultPmBytes(keyCount, valueSize);
        if (pmSize != null) {
            try {
                pm = Sizes.parse(pmSize);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--pm-size': "
                        + e.getMessage());
            }
            requireRange("--pm-size", pm, PutsBenchConfig.SMALLEST_PM_BYTES, MAX_PM_BYTES);
        }
        long free = usableSpace(dir);
        long needed = pm + PutsBenchConfig.FLOOR_FILE_BYTES;
        if (needed > free) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--pm-size': " + pm
                    + " bytes (and " + PutsBenchConfig.FLOOR_FILE_BYTES + " for the floor's file) exceed the "
                    + free + " bytes free in " + dir);
        }
        PutsBenchConfig config = new PutsBenchConfig(fabric, valueSize, threads, seconds, warmupSeconds, keyCount,
                hotKeys, dir, pm);
        PrintWriter err = spec.commandLine().getErr();
        PutsBenchReport report = new PutsBenchRun(config, line -> {
            err.println("bench puts: " + line);
            err.flush();
        }).run();
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? report.toJson() + System.lineSeparator() : report.toText());
        out.flush();
        return 0;
    }

    private long usableSpace(Path dir) {
        try {
            return Files.getFileStore(dir).getUsableSpace();
        } catch (IOException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--pm-dir': " + dir
                    + ": cannot read its free space (" + e.getMessage() + ")");
        }
    }

    private void requireRange(String option, long value, long min, long max) {
        if (value < min || value > max) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '" + option + "': " + value
                    + " is outside [" + min + ", " + max + "]");
        }
    }
}
