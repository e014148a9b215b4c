package io.asymnvm.core.fabric.tcp;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.NicSession;
import io.asymnvm.core.layout.ControlMessageLayout;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * Counts a server's open connections, in total and per frontend id, and enforces both caps. The total is taken
 * when a connection opens (before it could attach); the per-frontend count when an ATTACH control call names a
 * frontend id, before the control plane sees it, so a refused attach fences nobody. A connection whose session
 * the control plane bound to a frontend id (fenced older sessions included) counts for that id until it closes.
 * Thread-safe; attach is rare, so one monitor suffices.
 */
final class ConnectionRegistry {
    private final int maxConnections;
    private final int maxPerFrontend;
    private final Map<Integer, Integer> perFrontend = new HashMap<>();
    private int open;

    ConnectionRegistry(int maxConnections, int maxPerFrontend) {
        this.maxConnections = maxConnections;
        this.maxPerFrontend = maxPerFrontend;
    }

    /** A new connection; null if admitted, else the error its first request gets. */
    synchronized AsymNvmException open() {
        if (open >= maxConnections) {
            return new AsymNvmException(ErrorCode.LIMIT_EXCEEDED, "backend has " + open + " open connections, "
                    + "limit " + maxConnections + " (max connections); this one is refused");
        }
        open++;
        return null;
    }

    synchronized int openConnections() {
        return open;
    }

    synchronized int connectionsOf(int frontendId) {
        return perFrontend.getOrDefault(frontendId, 0);
    }

    /** One admitted connection: which frontend id it counts for. */
    final class Slot {
        private int counted = -1;
        private boolean released;

        /** Before a control call: an ATTACH naming another frontend id than the one counted must fit its cap. */
        void admitControl(byte[] request) {
            if (request.length < ControlMessageLayout.REQUEST_LENGTH) {
                return; // the control plane refuses it
            }
            ByteBuffer b = ControlMessageLayout.wrap(request);
            int kind = b.getInt();
            int frontendId = b.getInt();
            if (kind != ControlMessageLayout.KIND_ATTACH) {
                return;
            }
            synchronized (ConnectionRegistry.this) {
                if (frontendId == counted || released) {
                    return;
                }
                int n = perFrontend.getOrDefault(frontendId, 0);
                if (n >= maxPerFrontend) {
                    throw new AsymNvmException(ErrorCode.LIMIT_EXCEEDED, "frontend " + frontendId + " already has "
                            + n + " open connections, limit " + maxPerFrontend + " (max connections per frontend)");
                }
                move(frontendId);
            }
        }

        /** After a control call: count the connection for whatever id the control plane bound its session to. */
        void settle(NicSession session) {
            synchronized (ConnectionRegistry.this) {
                if (!released && session.frontendId() != counted) {
                    move(session.frontendId());
                }
            }
        }

        /** The connection closed. */
        void release() {
            synchronized (ConnectionRegistry.this) {
                if (released) {
                    return;
                }
                move(-1);
                released = true;
                open--;
            }
        }

        private void move(int frontendId) {
            if (counted >= 0) {
                perFrontend.merge(counted, -1, (a, b) -> a + b == 0 ? null : a + b);
            }
            counted = frontendId;
            if (frontendId >= 0) {
                perFrontend.merge(frontendId, 1, Integer::sum);
            }
        }
    }
}
