package io.asymnvm.examples.recovery;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.examples.bank.Bank;
import io.asymnvm.examples.bank.BankImpl;
import io.asymnvm.examples.support.Json;
import io.asymnvm.examples.support.ScratchDirectory;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * Backend restart time on a PM file of a given size (the goal: independent of the size, DESIGN §4: validate the
 * superblock, map, read the slab owner table, scan each frontend's rings from its checkpoint, finish replay,
 * listen).
 *
 * <p>Formats a sparse PM file of the given size, then repeats: start the node ({@code BackendNode.start} until
 * it returns, serving TCP on a free loopback port: timed), let frontend 0 (local fabric) recover and run
 * {@value #TRANSFERS} bank transfers whose last {@value #UNAPPLIED} stay unapplied (the frontend then crashes, so
 * every restart scans semantic records after the checkpoint), close the node. The first start (formatting) is
 * reported apart.
 */
public final class BackendRestartRun {
    static final int TRANSFERS = 1000;
    static final int UNAPPLIED = 200;
    static final int ACCOUNTS = 16;

    /** Restart times in ms, in run order; {@code where} is the directory of the PM file. */
    public record Report(long sizeBytes, Path where, double formatMillis, double[] restartMillis) {
        public double p50() {
            double[] s = restartMillis.clone();
            Arrays.sort(s);
            return s.length == 0 ? 0 : s[(s.length + 1) / 2 - 1];
        }

        public double max() {
            return Arrays.stream(restartMillis).max().orElse(0);
        }

        public double min() {
            return Arrays.stream(restartMillis).min().orElse(0);
        }

        public String toJson() {
            return Json.write(Json.object()
                    .put("size_bytes", sizeBytes)
                    .put("repetitions", restartMillis.length)
                    .put("restart_ms_p50", Json.decimal(p50(), 3))
                    .put("restart_ms_max", Json.decimal(max(), 3))
                    .put("restart_ms_min", Json.decimal(min(), 3))
                    .put("format_ms", Json.decimal(formatMillis, 3)));
        }

        public String toText() {
            StringBuilder b = new StringBuilder();
            b.append(String.format(Locale.ROOT, "backend restart on a %,d-byte PM file (%d frontend log areas) "
                    + "in %s%n", sizeBytes, frontendsFor(sizeBytes), where));
            b.append(String.format(Locale.ROOT, "  restart (BackendNode.start until serving)  p50 %8.1f ms   "
                    + "max %8.1f ms   min %8.1f ms over %d restarts%n", p50(), max(), min(), restartMillis.length));
            b.append(String.format(Locale.ROOT, "  first start (format)                      %12.1f ms%n",
                    formatMillis));
            return b.toString();
        }
    }

    private BackendRestartRun() {
    }

    /**
     * Where a {@code size}-byte file goes: a scratch directory under /dev/shm when it has that much room, else
     * under {@code fallback}.
     */
    public static Path chooseBase(long size, Path fallback) {
        Path shm = Path.of("/dev/shm");
        try {
            if (Files.isDirectory(shm) && Files.isWritable(shm) && Files.getFileStore(shm).getUsableSpace() >= size) {
                return shm;
            }
        } catch (IOException e) {
            // use the fallback
        }
        return fallback;
    }

    public static Report run(long size, int repetitions, Path base) {
        if (repetitions < 1) {
            throw new IllegalArgumentException("repetitions must be positive: " + repetitions);
        }
        Path dir;
        try {
            dir = Files.createTempDirectory(base, "asymnvm-bench-restart-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a scratch directory in " + base, e);
        }
        try {
            BackendConfiguration config = BackendConfiguration.builder(dir.resolve("backend.pm")).size(size).port(0)
                    .maxFrontends(frontendsFor(size)).conclude();
            FrontendOptions options = FrontendOptions.builder().redoBatch(1 << 20, 16 << 20, 10_000_000).conclude();
            double format = 0;
            double[] restarts = new double[repetitions];
            for (int r = -1; r < repetitions; r++) {
                long t0 = System.nanoTime();
                try (BackendNode node = BackendNode.start(config)) {
                    double ms = (System.nanoTime() - t0) / 1e6;
                    if (r < 0) {
                        format = ms;
                    } else {
                        restarts[r] = ms;
                    }
                    work(node, options);
                }
            }
            return new Report(size, dir.getParent(), format, restarts);
        } finally {
            ScratchDirectory.delete(dir);
        }
    }

    /**
     * The default number of frontend log areas, or fewer on a small file, so that the rings take at most half of
     * it (a 64 MiB file holds one area of default rings).
     */
    static int frontendsFor(long size) {
        long area = BackendConfiguration.DEFAULT_PAGE_SIZE + BackendConfiguration.DEFAULT_SEM_RING
                + BackendConfiguration.DEFAULT_REDO_RING;
        return (int) Math.max(1, Math.min(BackendConfiguration.DEFAULT_MAX_FRONTENDS, size / 2 / area));
    }

    /** Recovers frontend 0, runs transfers, applies all but the last {@value #UNAPPLIED}, crashes. */
    private static void work(BackendNode node, FrontendOptions options) {
        AsymNvm nvm = AsymNvm.open(node.localFabric(), 0, options);
        try {
            Bank bank = nvm.transactional(Bank.class, new BankImpl());
            nvm.recover();
            bank.open(ACCOUNTS, 1_000_000);
            for (int i = 0; i < TRANSFERS; i++) {
                if (i == TRANSFERS - UNAPPLIED) {
                    nvm.sync();
                }
                bank.transfer(i % ACCOUNTS, (i + 1) % ACCOUNTS, 1);
            }
        } finally {
            nvm.crash();
        }
    }
}
