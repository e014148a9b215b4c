package io.asymnvm.recovery.crash;

import io.asymnvm.core.region.ByteArrayRegion;

import java.nio.ByteBuffer;
import java.util.BitSet;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/**
 * Simulated persistent memory for crash tests (DESIGN §5): a {@link ByteArrayRegion} that also knows what a power
 * failure would leave on the media.
 *
 * <h2>Model</h2>
 * Two images are kept: the volatile one every access sees (the CPU caches plus media) and the durable one (the
 * media). A store marks the 64-byte cache lines it touches dirty; {@link #persist} copies the dirty lines of its
 * range into the durable image and cleans them (a cache-line write-back plus fence). Before a persist, a dirty
 * line may already have been evicted to the media, wholly or partly: the hardware writes back lines at any time,
 * and only 8-byte aligned stores are single-copy atomic. So {@link #crashImage} returns the durable image in which
 * every 8-byte word of every dirty line independently holds either its durable or its newest value. To reach
 * the interesting states more often than independent coin flips per word would, one image draws a policy
 * first (every dirty line kept, every dirty line lost, or each line by itself: kept whole, lost whole, or word by
 * word); every combination of words remains possible.
 *
 * <h2>Cutting power</h2>
 * {@link #failAtPersist(long)} picks a persist call by its number (all threads counted, from 0). That call throws
 * {@link SimulatedPowerFailure} before doing anything, and from then on the region is dead: every store and
 * every persist from any thread throws the same error, so nothing more reaches the media or the volatile image
 * ({@link #crashImage} then describes the instant of the failure). Reads continue to work, as reads of a dying
 * node's caches would; the code under test stops as soon as it tries to store.
 *
 * <p>Thread-safe: stores, persists and images are serialized on this region's monitor (a test region: the
 * simplicity is worth more than the throughput), so a persist never copies half of a concurrent store. Bulk
 * reads are not serialized, exactly like the base class. {@link #perturbPersists} makes chosen threads pause
 * before persisting, to explore more interleavings. Regions up to 2 GiB.
 */
public class SimulatedPmRegion extends ByteArrayRegion {
    /** Cache line: the unit of write-back and of dirty tracking. */
    public static final int LINE_LENGTH = 64;
    /** The largest store the media applies atomically. */
    public static final int WORD_LENGTH = 8;

    private static final int POLICY_KEEP_ALL = 0;
    private static final int POLICY_LOSE_ALL = 1;
    private static final int POLICIES = 8;

    private final byte[] durable;
    private final BitSet dirty = new BitSet();
    private long persists;
    private long failAt = -1;
    private volatile boolean powerLost;
    private SimulatedPowerFailure failure;
    private volatile Predicate<Thread> pauseWho = t -> true;
    private volatile int pauseOneIn = 1;
    private volatile long pauseNanos;

    /** A blank region of {@code size} bytes (volatile and durable image all zeros). */
    public SimulatedPmRegion(String name, int size) {
        this(name, new byte[size]);
    }

    /**
     * A region whose media holds {@code contents} (for example a {@link #crashImage} of an earlier region): the
     * array becomes the volatile image, a copy of it the durable one, and no line is dirty.
     */
    public SimulatedPmRegion(String name, byte[] contents) {
        super(name, contents);
        this.durable = contents.clone();
    }

    /**
     * Makes persist call number {@code n} (counting every call since construction, from 0) fail with
     * {@link SimulatedPowerFailure} and the region go dead. {@code n} must not have been reached yet.
     */
    public synchronized void failAtPersist(long n) {
        if (n < persists) {
            throw new IllegalArgumentException("persist call " + n + " already happened (" + persists
                    + " persist calls so far)");
        }
        if (powerLost) {
            throw new IllegalStateException("region " + name() + " already lost power");
        }
        failAt = n;
    }

    /** Persist calls that completed (made their range durable); after a failure, the failing call's number. */
    public synchronized long persistCount() {
        return persists;
    }

    /** Whether power was lost (the chosen persist call was reached). */
    public boolean powerLost() {
        return powerLost;
    }

    /** The failure thrown at the chosen persist call (its stack trace shows the code point), or null. */
    public synchronized SimulatedPowerFailure failure() {
        return failure;
    }

    /** Cache lines stored to since their last persist. */
    public synchronized int dirtyLines() {
        return dirty.cardinality();
    }

    /**
     * An image a power failure now could leave on the media: the durable image, with each 8-byte word of each
     * dirty line holding either its durable or its newest value (see the class comment for the distribution).
     * A new array; the region is unchanged.
     */
    public synchronized byte[] crashImage(Random random) {
        byte[] image = durable.clone();
        // java.util.Random's first outputs barely differ for nearby seeds: scramble before choosing the policy
        int policy = (int) Long.remainderUnsigned(mix(random.nextLong()), POLICIES);
        for (int line = dirty.nextSetBit(0); line >= 0; line = dirty.nextSetBit(line + 1)) {
            int start = line * LINE_LENGTH;
            int end = Math.min(start + LINE_LENGTH, bytes.length);
            int choice = policy == POLICY_KEEP_ALL ? 0 : policy == POLICY_LOSE_ALL ? 1 : random.nextInt(3);
            if (choice == 0) {
                System.arraycopy(bytes, start, image, start, end - start);
            } else if (choice == 2) {
                for (int w = start; w < end; w += WORD_LENGTH) {
                    if (random.nextBoolean()) {
                        System.arraycopy(bytes, w, image, w, Math.min(WORD_LENGTH, end - w));
                    }
                }
            }
        }
        return image;
    }

    /** The media as they are: every unpersisted store lost. A new array. */
    public synchronized byte[] durableImage() {
        return durable.clone();
    }

    @Override
    protected void beforeStore(long offset, long length) {
        // called by the base class's store methods, all of which run under this monitor (overrides below)
        requirePower("store to [" + offset + ", " + (offset + length) + ")");
        if (length > 0) {
            dirty.set(lineOf(offset), lineOf(offset + length - 1) + 1);
        }
    }

    @Override
    public void persist(long offset, long length) {
        pauseBeforePersist();
        synchronized (this) {
            persistNow(offset, length);
        }
    }

    private void persistNow(long offset, long length) {
        check(offset, length);
        requirePower("persist of [" + offset + ", " + (offset + length) + ")");
        if (persists == failAt) {
            failure = new SimulatedPowerFailure("simulated power failure of " + name() + " at persist call "
                    + persists + " of [" + offset + ", " + (offset + length) + ") in thread "
                    + Thread.currentThread().getName(), persists);
            powerLost = true;
            throw failure;
        }
        if (length > 0) {
            int last = lineOf(offset + length - 1);
            for (int line = dirty.nextSetBit(lineOf(offset)); line >= 0 && line <= last;
                 line = dirty.nextSetBit(line + 1)) {
                int start = line * LINE_LENGTH;
                System.arraycopy(bytes, start, durable, start, Math.min(LINE_LENGTH, bytes.length - start));
                dirty.clear(line);
            }
        }
        persists++;
    }

    private void requirePower(String what) {
        if (powerLost) {
            throw new SimulatedPowerFailure("region " + name() + " lost power at persist call " + persists
                    + "; refused " + what, persists);
        }
    }

    /** The finalizer of MurmurHash3: every input bit affects every output bit. */
    private static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return z ^ (z >>> 33);
    }

    private static int lineOf(long offset) {
        return (int) (offset / LINE_LENGTH);
    }

    /**
     * Timing perturbation: a thread accepted by {@code who} that calls {@link #persist} pauses first, with
     * probability {@code 1 / oneIn}, for up to {@code maxNanos}, outside the region's monitor. Its stores are
     * visible and not yet durable meanwhile, so other threads get to act on them: the window between a store and
     * its write-back that real hardware and scheduling allow, and a fast test rarely hits. Slowing one thread
     * (say, the backend's replayer) opens more such windows than slowing all. {@code maxNanos = 0} turns it off.
     */
    public void perturbPersists(Predicate<Thread> who, int oneIn, long maxNanos) {
        if (oneIn < 1 || maxNanos < 0) {
            throw new IllegalArgumentException("perturbation needs oneIn >= 1 and maxNanos >= 0: " + oneIn + ", "
                    + maxNanos);
        }
        this.pauseWho = Objects.requireNonNull(who, "who");
        this.pauseOneIn = oneIn;
        this.pauseNanos = maxNanos;
    }

    private void pauseBeforePersist() {
        long max = pauseNanos;
        if (max > 0 && !powerLost && pauseWho.test(Thread.currentThread())
                && ThreadLocalRandom.current().nextInt(pauseOneIn) == 0) {
            LockSupport.parkNanos(1 + ThreadLocalRandom.current().nextLong(max));
        }
    }

    // Every store runs under this region's monitor: beforeStore tracks it, and persist must not copy half of it.

    @Override
    public synchronized void write(long offset, byte[] src, int srcOffset, int length) {
        super.write(offset, src, srcOffset, length);
    }

    @Override
    public synchronized void write(long offset, ByteBuffer src) {
        super.write(offset, src);
    }

    @Override
    public synchronized void putLong(long offset, long value) {
        super.putLong(offset, value);
    }

    @Override
    public synchronized void putInt(long offset, int value) {
        super.putInt(offset, value);
    }

    @Override
    public synchronized void putLongVolatile(long offset, long value) {
        super.putLongVolatile(offset, value);
    }

    @Override
    public synchronized boolean compareAndSetLong(long offset, long expected, long update) {
        return super.compareAndSetLong(offset, expected, update);
    }

    @Override
    public synchronized long getAndAddLong(long offset, long delta) {
        return super.getAndAddLong(offset, delta);
    }

    @Override
    public synchronized void zero(long offset, long length) {
        super.zero(offset, length);
    }
}
