package io.asymnvm.core.fabric;

/**
 * One connection to a memory node. Posting never blocks on the network: each call returns a
 * {@link Completion} that the caller may await. Operations complete in posting order. Thread-safe; the order
 * between threads posting concurrently is the order their calls took effect.
 *
 * <p>On a lost connection every pending completion fails with {@code CONNECTION_LOST} and later posts fail
 * at once; the caller opens a new connection.
 */
public interface FabricConnection extends AutoCloseable {

    Completion read(int regionId, long offset, int length);

    Completion write(int regionId, long offset, byte[] data, int dataOffset, int length);

    /** 8-byte compare-and-swap at an aligned offset; {@link Completion#value1()} is the previous value. */
    Completion compareAndSwap(int regionId, long offset, long expected, long update);

    /**
     * Makes every range this connection wrote since its last flush durable at the responder. When
     * {@code stamped}, the responder then stores {@code stamp} at the session's stamp word (set up by the control
     * plane) and persists it too, so the durable watermark of a log is itself durable.
     */
    Completion flush(long stamp, boolean stamped);

    /** A two-sided control call; the reply payload is in {@link Completion#bytes()}. */
    Completion call(byte[] request);

    FabricCounters counters();

    boolean isOpen();

    @Override
    void close();
}
