package io.asymnvm.backend;

import io.asymnvm.core.fabric.tcp.TcpServerLimits;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.FrameLayout;
import io.asymnvm.core.layout.RootDirectoryLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;

/**
 * The TCP server limits a backend derives from its geometry. The largest request a frontend legitimately sends
 * is a WRITE of one log record or redo batch, which never exceeds its ring's capacity (the appender refuses
 * larger ones, and a ring window rejects writes past its end); READs carry no payload and control messages are
 * small. So the default frame limit is the frame header plus the larger ring's capacity (or the control
 * allowance if that is larger), capped at the protocol's largest frame.
 */
final class ServerLimits {
    /**
     * Bound on a control request's payload: well above the largest one defined (a catalog bind with the longest
     * name, {@value #LARGEST_CATALOG_REQUEST} bytes) to leave room for attach credentials.
     */
    static final int CONTROL_REQUEST_ALLOWANCE = 4096;
    static final int LARGEST_CATALOG_REQUEST = ControlMessageLayout.REQUEST_LENGTH + 4
            + RootDirectoryLayout.MAX_NAME_BYTES + 24;

    private ServerLimits() {
    }

    /** Largest legal request frame, length field included, for rings of these capacities. */
    static int largestLegalFrame(long semRingCapacity, long redoRingCapacity) {
        long payload = Math.max(CONTROL_REQUEST_ALLOWANCE, Math.max(semRingCapacity, redoRingCapacity));
        long frame = FrameLayout.LENGTH_FIELD_LENGTH + FrameLayout.REQUEST_HEADER_LENGTH + payload;
        return (int) Math.min(frame, FrameLayout.MAX_FRAME_LENGTH); // no frontend sends more than the protocol allows
    }

    /** The configured limits with the derived values filled in for this image. */
    static TcpServerLimits resolve(TcpServerLimits configured, Superblock sb) {
        return configured.resolve(largestLegalFrame(sb.semRingCapacity(), sb.redoRingCapacity()), sb.maxFrontends());
    }
}
