package io.asymnvm.frontend.link;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.auth.AttachProof;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.FabricCounters;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A frontend's link to its backend: the current fabric connection, its generation (bumped on every reconnect)
 * and the control calls. Posting never blocks; a post on a dead connection yields a failed completion, and the
 * caller asks for {@link #reconnect(long)} with the generation it saw fail. Counters accumulate across
 * reconnects.
 */
public final class BackendLink implements RingWriter, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BackendLink.class);

    private final Fabric fabric;
    private final int frontendId;
    private final long reconnectTimeoutNanos;
    private final FabricCounters.Snapshot[] retired = {null};
    private volatile FabricConnection connection;
    private volatile long generation;
    private volatile long attachEpoch;
    private volatile java.util.UUID backendIdentity;
    private volatile boolean closed;
    private final byte[] secret;
    // --- mirrors (issue 9): which node this is, the frontend's epoch fence, and whether it is a SYNC mirror ---
    private final String endpoint;
    private final EpochFence fence;
    private final boolean mirror;

    public BackendLink(Fabric fabric, int frontendId, long reconnectTimeoutMillis) {
        this(fabric, frontendId, reconnectTimeoutMillis, null);
    }

    /**
     * With a {@code secret}, every attach (the first and each reconnect) asks the backend for a challenge and
     * answers it ({@link AttachProof}); null attaches without a credential.
     */
    public BackendLink(Fabric fabric, int frontendId, long reconnectTimeoutMillis, byte[] secret) {
        this(fabric, frontendId, reconnectTimeoutMillis, secret, "backend", null, false);
    }

    /**
     * A link to {@code endpoint} (a name for messages) whose every attach is checked against {@code fence} (null:
     * none): a node answering with an epoch older than the highest this frontend has seen is refused with
     * {@code STALE_EPOCH}. The backend's link ({@code mirror} false) raises the fence to its epoch and refuses a
     * node that answers as a mirror ({@code NOT_PRIMARY}); a SYNC mirror's link leaves the role to its caller.
     */
    public BackendLink(Fabric fabric, int frontendId, long reconnectTimeoutMillis, byte[] secret, String endpoint,
                       EpochFence fence, boolean mirror) {
        this.endpoint = endpoint;
        this.fence = fence;
        this.mirror = mirror;
        this.secret = secret == null ? null : secret.clone();
        this.fabric = fabric;
        this.frontendId = frontendId;
        this.reconnectTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(reconnectTimeoutMillis);
    }

    public int frontendId() {
        return frontendId;
    }

    public String fabricName() {
        return fabric.name();
    }

    /** Connects and attaches; the first attach of a frontend incarnation. */
    public synchronized AttachReply open() {
        FabricConnection c = fabric.connect();
        try {
            AttachReply reply = attach(c);
            connection = c;
            generation++;
            attachEpoch = reply.attachEpoch();
            backendIdentity = reply.identity();
            return reply;
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
    }

    private AttachReply attach(FabricConnection c) {
        java.util.UUID identity = backendIdentity;
        byte[] request = secret != null ? AttachProof.attachRequest(c, secret, frontendId, attachEpoch, identity) : identity == null
                ? ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, frontendId, attachEpoch)
                : ControlMessageLayout.reattachRequest(frontendId, attachEpoch, identity);
        byte[] reply = c.call(request).await().bytes();
        AttachReply r = AttachReply.decode(reply);
        if (fence != null) {
            if (mirror) {
                fence.check(r, endpoint);
            } else if (r.isMirror()) {
                throw new AsymNvmException(ErrorCode.NOT_PRIMARY, endpoint + " answers frontend " + frontendId
                        + " as a mirror (backend epoch " + r.backendEpoch() + "), not as the serving backend");
            } else {
                fence.observe(r, endpoint);
            }
        }
        return r;
    }

    /** The attach epoch of this link's current session (0 before the first attach). */
    public long attachEpoch() {
        return attachEpoch;
    }

    /** The name of the node this link reaches, for messages. */
    public String endpoint() {
        return endpoint;
    }

    /**
     * A new, unopened link to the same node with the same credential and fence, as its backend: what a frontend
     * resumes on after this mirror was promoted.
     */
    public BackendLink asBackend(long reconnectTimeoutMillis) {
        return new BackendLink(fabric, frontendId, reconnectTimeoutMillis, secret, endpoint, fence, false);
    }

    /**
     * Stops this link from any thread, also one in {@link #reconnect} (which then fails at its next attempt
     * instead of at its timeout): how a dropped mirror releases the commits waiting for it.
     */
    public void cancel() {
        closed = true;
        FabricConnection c = connection;
        if (c != null) {
            c.close();
        }
    }

    /**
     * Replaces a connection that failed in generation {@code failedGeneration}: retries connect + attach until
     * the reconnect timeout, then throws {@code CONNECTION_LOST}. An attach refused with {@code LIMIT_EXCEEDED}
     * (the backend still counts the lost connection against its per-frontend cap until it sees it close) is retried
     * too, and is what is thrown if it lasts until the timeout. Returns the attach reply, or null if another
     * thread already reconnected. Throws {@code STALE_EPOCH} if the attach epoch moved by more than this attach,
     * i.e. another incarnation of this frontend attached in between.
     */
    public synchronized AttachReply reconnect(long failedGeneration) {
        if (closed) {
            throw new AsymNvmException(ErrorCode.CONNECTION_LOST, "frontend " + frontendId + " is closed");
        }
        if (generation != failedGeneration && connection != null && connection.isOpen()) {
            return null;
        }
        FabricConnection old = connection;
        if (old != null) {
            old.close();
            retire(old);
        }
        long deadline = System.nanoTime() + reconnectTimeoutNanos;
        long backoff = TimeUnit.MILLISECONDS.toNanos(20);
        AsymNvmException last = null;
        while (System.nanoTime() < deadline && !closed) {
            FabricConnection c = null;
            try {
                c = fabric.connect();
                AttachReply reply = attach(c);
                if (!reply.identity().equals(backendIdentity)) {
                    // another PM image answers at this address: re-posting our records would corrupt it
                    throw new AsymNvmException(ErrorCode.IDENTITY_MISMATCH, "frontend " + frontendId
                            + " was attached to PM image " + backendIdentity + " but the backend now serves image "
                            + reply.identity() + "; refusing to resume on another image");
                }
                if (reply.attachEpoch() != attachEpoch + 1) {
                    // Another incarnation attached while this one was away (it fenced us), or our own attach
                    // landed but its reply was lost. Either way this incarnation must not write again: re-posting
                    // its retained records would overwrite the newer one's log.
                    throw new AsymNvmException(ErrorCode.STALE_EPOCH, "frontend " + frontendId + " attached with "
                            + "epoch " + attachEpoch + " but re-attached as epoch " + reply.attachEpoch()
                            + ": another incarnation attached meanwhile, so this one is fenced");
                }
                connection = c;
                generation++;
                attachEpoch = reply.attachEpoch();
                LOG.info("frontend {} reconnected (generation {}), backend applied tx {}", frontendId, generation,
                        reply.appliedTxId());
                return reply;
            } catch (AsymNvmException e) {
                if (c != null) {
                    c.close();
                }
                if (e.errorCode() != ErrorCode.CONNECTION_LOST && e.errorCode() != ErrorCode.TIMEOUT
                        && e.errorCode() != ErrorCode.LIMIT_EXCEEDED) {
                    throw e;
                }
                // LIMIT_EXCEEDED: the backend still counts the connection that was lost (it has not seen it close
                // yet) against the per-frontend cap; it will, so this is retried like a lost connection
                last = e;
                LockSupport.parkNanos(backoff);
                backoff = Math.min(backoff * 2, TimeUnit.MILLISECONDS.toNanos(200));
            }
        }
        if (last != null && last.errorCode() == ErrorCode.LIMIT_EXCEEDED) {
            throw new AsymNvmException(ErrorCode.LIMIT_EXCEEDED, "frontend " + frontendId + " could not re-attach for "
                    + TimeUnit.NANOSECONDS.toMillis(reconnectTimeoutNanos) + " ms: " + last.getMessage(), last);
        }
        if (closed) {
            throw new AsymNvmException(ErrorCode.CONNECTION_LOST, endpoint + " of frontend " + frontendId
                    + " was closed while reconnecting");
        }
        throw new AsymNvmException(ErrorCode.CONNECTION_LOST, endpoint + " unreachable for "
                + TimeUnit.NANOSECONDS.toMillis(reconnectTimeoutNanos) + " ms", last);
    }

    private void retire(FabricConnection c) {
        FabricCounters.Snapshot s = c.counters().snapshot();
        FabricCounters.Snapshot prev = retired[0];
        retired[0] = prev == null ? s : prev.plus(s);
    }

    public long generation() {
        return generation;
    }

    public FabricConnection connection() {
        FabricConnection c = connection;
        if (c == null) {
            throw new IllegalStateException("frontend " + frontendId + " is not connected");
        }
        return c;
    }

    public Completion write(int region, long offset, byte[] data, int length) {
        return connection().write(region, offset, data, 0, length);
    }

    public Completion read(int region, long offset, int length) {
        return connection().read(region, offset, length);
    }

    public Completion flush(long stamp) {
        return connection().flush(stamp, true);
    }

    /** Two-sided control call; waits for the reply. */
    public byte[] call(int kind, long arg) {
        return connection().call(ControlMessageLayout.request(kind, frontendId, arg)).await().bytes();
    }

    /** Two-sided control call with a caller-built request; waits for the reply. */
    public byte[] call(byte[] request) {
        return connection().call(request).await().bytes();
    }

    /** Counters of every connection this link has used. */
    public synchronized FabricCounters.Snapshot counters() {
        FabricCounters.Snapshot now = connection == null ? null : connection.counters().snapshot();
        FabricCounters.Snapshot prev = retired[0];
        if (prev == null) {
            return now == null ? new FabricCounters().snapshot() : now;
        }
        if (now == null) {
            return prev;
        }
        return prev.plus(now);
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (connection != null) {
            connection.close();
        }
    }
}
