package io.asymnvm.core.fabric.local;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.FabricCounters;
import io.asymnvm.core.fabric.NicSession;

import java.nio.ByteBuffer;

/**
 * The in-process fabric: the memory node lives in the same JVM. Operations run on the caller's thread
 * through the same {@link EmulatedNic} the TCP fabric uses (byte copies, persist calls, counters), and their
 * completions are done when the post returns.
 */
public final class LocalFabric implements Fabric {
    private final EmulatedNic nic;
    /** Why the node behind this fabric stopped serving; null while it serves. */
    private volatile String nodeClosed;

    public LocalFabric(EmulatedNic nic) {
        this.nic = nic;
    }

    @Override
    public String name() {
        return "local";
    }

    @Override
    public FabricConnection connect() {
        return new LocalConnection(this);
    }

    /**
     * Called by the node when it stops serving (before it unmaps anything): every later operation of every
     * connection, and one that meets the node's regions already closed, fails with {@code CONNECTION_LOST}, which is
     * what a tcp peer sees when the node's server closes, so a frontend reconnects or fails over the same way on
     * both fabrics. Without it a closed node's regions surfaced as {@code UNKNOWN} ("region closed").
     */
    public void nodeClosed(String reason) {
        nodeClosed = reason;
    }

    /** The failure of an operation posted to (or running when) the node closed; {@code cause} may be null. */
    private AsymNvmException lost(Throwable cause) {
        return new AsymNvmException(ErrorCode.CONNECTION_LOST, "local node closed: " + nodeClosed, cause);
    }

    @Override
    public void close() {
    }

    static final class LocalConnection implements FabricConnection {
        private final LocalFabric fabric;
        private final EmulatedNic nic;
        private final NicSession session = NicSession.inProcess();
        private final FabricCounters counters = new FabricCounters();
        private volatile boolean open = true;

        LocalConnection(LocalFabric fabric) {
            this.fabric = fabric;
            this.nic = fabric.nic;
            session.onDisconnect(this::close); // later posts fail with CONNECTION_LOST, as over tcp
        }

        private interface Op {
            void run(Completion c);
        }

        private synchronized Completion post(Op op) {
            Completion c = new Completion(counters);
            if (!open) {
                c.fail(new AsymNvmException(ErrorCode.CONNECTION_LOST, "local connection closed"));
                return c;
            }
            if (fabric.nodeClosed != null) {
                c.fail(fabric.lost(null));
                return c;
            }
            try {
                op.run(c);
            } catch (AsymNvmException e) {
                c.fail(fabric.nodeClosed != null ? fabric.lost(e) : e);
            } catch (RuntimeException e) {
                c.fail(fabric.nodeClosed != null ? fabric.lost(e)
                        : new AsymNvmException(ErrorCode.UNKNOWN, e.toString(), e));
            }
            return c;
        }

        @Override
        public Completion read(int regionId, long offset, int length) {
            counters.read(length);
            return post(c -> c.complete(nic.read(session, regionId, offset, length), 0, 0));
        }

        @Override
        public Completion write(int regionId, long offset, byte[] data, int dataOffset, int length) {
            counters.write(length);
            return post(c -> {
                nic.write(session, regionId, offset, ByteBuffer.wrap(data, dataOffset, length));
                c.complete(null, 0, 0);
            });
        }

        @Override
        public Completion compareAndSwap(int regionId, long offset, long expected, long update) {
            counters.atomic();
            return post(c -> c.complete(null, nic.compareAndSwap(session, regionId, offset, expected, update), 0));
        }

        @Override
        public Completion flush(long stamp, boolean stamped) {
            counters.flush();
            return post(c -> {
                long[] r = nic.flush(session, stamp, stamped);
                counters.persisted(r[0], r[1]);
                c.complete(null, r[0], r[1]);
            });
        }

        @Override
        public Completion call(byte[] request) {
            counters.control(request.length);
            return post(c -> c.complete(nic.control(session, request), 0, 0));
        }

        @Override
        public FabricCounters counters() {
            return counters;
        }

        @Override
        public boolean isOpen() {
            return open && !session.isFenced() && fabric.nodeClosed == null;
        }

        @Override
        public synchronized void close() {
            if (open) {
                open = false;
                nic.closed(session);
            }
        }
    }
}
