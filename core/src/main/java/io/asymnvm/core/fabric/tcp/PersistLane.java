package io.asymnvm.core.fabric.tcp;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One dedicated persist thread for one event loop: the loop hands it a FLUSH (the msync) and goes on serving its
 * other connections; the lane posts the reply back to the loop. After each task the thread polls for the next one
 * for {@value #SPIN_MICROS} us before it parks, so back-to-back commits hand off to a thread that is already
 * running (no wake-up on the way in); the way back to the loop is an ordinary task submission.
 *
 * <p>Tasks run one at a time in submission order. {@link #close()} lets queued tasks finish and stops the thread.
 */
final class PersistLane implements Executor, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PersistLane.class);
    /** How long the lane polls for the next task before it parks. */
    static final long SPIN_MICROS = 50;

    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean parked;
    private volatile boolean closed;

    PersistLane(String name) {
        thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void execute(Runnable task) {
        if (closed) {
            throw new RejectedExecutionException("persist lane " + thread.getName() + " closed");
        }
        tasks.add(task);
        if (parked) {
            LockSupport.unpark(thread);
        }
    }

    private void run() {
        long spinNanos = TimeUnit.MICROSECONDS.toNanos(SPIN_MICROS);
        long idleSince = System.nanoTime();
        while (true) {
            Runnable task = tasks.poll();
            if (task != null) {
                try {
                    task.run();
                } catch (Throwable t) { // tasks answer their own failures; this keeps the lane alive
                    LOG.error("persist task failed: {}", t.toString(), t);
                }
                idleSince = System.nanoTime();
                continue;
            }
            if (closed) {
                return;
            }
            if (System.nanoTime() - idleSince < spinNanos) {
                Thread.onSpinWait();
                continue;
            }
            parked = true;
            if (tasks.isEmpty() && !closed) { // a task added before parked was set is seen here
                LockSupport.park(this);
            }
            parked = false;
            idleSince = System.nanoTime();
        }
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
