package io.asymnvm.rdma;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * What the rdma fabric needs of a reliable-connected queue pair: SEND of a message, signalled one-sided READ and
 * WRITE, and events. {@link RdmaChannel} is the DiSNI one; a test harness can supply another, so that
 * {@link RdmaConnection} and {@link RdmaSession} (all of the fabric's logic) run without a device.
 */
interface QueuePair {

    /** What the owner of a queue pair hears about, on the thread that processes its completions. */
    interface Listener {
        /** A message arrived ({@code message} is a copy; the receive buffer is already posted again). */
        void onMessage(QueuePair qp, ByteBuffer message, int length);

        /** A one-sided READ or WRITE posted with {@code id} completed successfully. */
        void onOneSided(QueuePair qp, long id);

        /** The connection is unusable: a work request failed ({@code reason} names the status) or it disconnected. */
        void onFailure(QueuePair qp, String reason);
    }

    /**
     * Sends {@code length} bytes of {@code message} as one SEND; with {@code fence} it waits until every earlier
     * RDMA READ of this queue pair completed. Never blocks: without a free send buffer the message is queued.
     */
    void send(byte[] message, int length, boolean fence) throws IOException;

    /**
     * Posts a signalled RDMA WRITE ({@code write}, fenced behind earlier READs) or READ between local registered
     * memory and {@code remoteAddress} under {@code rkey}; completion is reported with {@code id}.
     */
    void postOneSided(boolean write, long localAddress, int lkey, int length, long remoteAddress, int rkey, long id)
            throws IOException;

    /** Sets the listener; a failure that happened before is delivered to it at once. */
    void listen(Listener listener);

    /** Marks the queue pair failed and tells the listener (once). */
    void fail(String reason);

    /** Disconnects and releases; never throws. */
    void closeQuietly();
}
