package io.asymnvm.cluster;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** The one decision thread each coordinator and guard runs its ZooKeeper calls on (never a Curator thread). */
final class ClusterThreads {
    private static final long STOP_WAIT_SECONDS = 5;

    private ClusterThreads() {
    }

    static ScheduledExecutorService single(String name) {
        return Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    /** Stops {@code executor}, interrupting a running task if {@code interrupt}, and waits a bounded time. */
    static void stop(ExecutorService executor, boolean interrupt) {
        if (interrupt) {
            executor.shutdownNow();
        } else {
            executor.shutdown();
        }
        try {
            executor.awaitTermination(STOP_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
