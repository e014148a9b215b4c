package io.asymnvm.frontend;

import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.ForwardingConnection;
import io.asymnvm.core.fabric.ForwardingFabric;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Group commit combines FLUSHes: committers whose records were posted while a FLUSH is in flight wait for it and
 * then share one FLUSH, instead of each posting its own (pipelined). The fabric holds every FLUSH reply back
 * briefly, so records of concurrent committers always pile up behind a FLUSH in flight; the assertions are on
 * counts only.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GroupCommitTest {
    private static final int THREADS = 4;
    private static final int COMMITS_PER_THREAD = 12;
    private static final long HOLD_MICROS = 5_000;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void shouldPostFewerFlushesThanCommitsWhenCommittersOverlap() throws Exception {
        Result combined = run(true);
        System.out.printf("group commit, %d threads, FLUSH replies held %d us: %d commits, %d FLUSHes "
                + "(combined)%n", THREADS, HOLD_MICROS, combined.commits, combined.flushes);
        assertEquals(THREADS * COMMITS_PER_THREAD, combined.commits);
        assertTrue(combined.flushes < combined.commits, () -> "FLUSHes " + combined.flushes + " for "
                + combined.commits + " commits");
        // pipelined FLUSHes come close to one per commit; combined ones cover the other committers' records
        assertTrue(2 * combined.flushes <= combined.commits, () -> "combined FLUSHes should each cover about "
                + (THREADS - 1) + " commits: " + combined.flushes + " FLUSHes for " + combined.commits + " commits");
    }

    @Test
    void shouldKeepEveryCommitDurableWhenPipelined() throws Exception {
        Result pipelined = run(false);
        System.out.printf("group commit, %d threads, FLUSH replies held %d us: %d commits, %d FLUSHes "
                + "(pipelined)%n", THREADS, HOLD_MICROS, pipelined.commits, pipelined.flushes);
        assertEquals(THREADS * COMMITS_PER_THREAD, pipelined.commits);
        assertTrue(pipelined.flushes <= pipelined.commits, () -> pipelined.toString());
    }

    private record Result(long commits, long flushes) {
    }

    private Result run(boolean combine) throws Exception {
        Path sub = dir.resolve(combine ? "combined" : "pipelined");
        java.nio.file.Files.createDirectories(sub);
        ScheduledExecutorService replies = Executors.newSingleThreadScheduledExecutor();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try (TestBackend backend = TestBackend.start(sub, TestBackend.Transport.LOCAL);
             HeldFlushFabric fabric = new HeldFlushFabric(backend.node().localFabric(), replies);
             AsymNvm nvm = AsymNvm.open(fabric, 0, FrontendOptions.builder().asyncFlushMicros(10_000_000)
                     .combineFlushes(combine).conclude())) {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            cells.create(THREADS);
            for (int i = 0; i < THREADS; i++) {
                cells.set(i, 0); // every page cached: each commit is one record and one durability wait
            }
            long commitsBefore = nvm.stats().commits();
            long flushesBefore = fabric.flushes.get();
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int me = t;
                futures.add(pool.submit(() -> {
                    for (int i = 1; i <= COMMITS_PER_THREAD; i++) {
                        cells.set(me, i);
                    }
                }));
            }
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
            long[] state = cells.snapshot();
            for (int t = 0; t < THREADS; t++) {
                assertEquals(COMMITS_PER_THREAD, state[t], "committer " + t);
            }
            assertTrue(nvm.stats().durableTxId() >= nvm.stats().lastTxId(), "every commit durable");
            return new Result(nvm.stats().commits() - commitsBefore, fabric.flushes.get() - flushesBefore);
        } finally {
            pool.shutdownNow();
            replies.shutdownNow();
        }
    }

    /** Completes every FLUSH {@value #HOLD_MICROS} us after it was posted (or when its reply lands, if later). */
    private static final class HeldFlushFabric extends ForwardingFabric {
        final AtomicLong flushes = new AtomicLong();
        private final ScheduledExecutorService replies;

        HeldFlushFabric(Fabric delegate, ScheduledExecutorService replies) {
            super(delegate);
            this.replies = replies;
        }

        @Override
        protected FabricConnection wrap(FabricConnection connection) {
            return new ForwardingConnection(connection) {
                @Override
                public Completion flush(long stamp, boolean stamped) {
                    flushes.incrementAndGet();
                    Completion real = delegate().flush(stamp, stamped);
                    Completion held = new Completion(delegate().counters());
                    replies.schedule(() -> forward(real, held), HOLD_MICROS, TimeUnit.MICROSECONDS);
                    return held;
                }
            };
        }

        private void forward(Completion real, Completion held) {
            if (!real.isDone()) {
                replies.schedule(() -> forward(real, held), 100, TimeUnit.MICROSECONDS);
            } else if (real.isFailed()) {
                held.fail(real.error());
            } else {
                held.complete(real.bytes(), real.value1(), real.value2());
            }
        }
    }
}
