package io.asymnvm.rdma;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Access;
import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.fabric.NicSession;
import io.asymnvm.rdma.RdmaMessageLayout.Key;
import io.asymnvm.rdma.RdmaMessageLayout.Range;
import io.asymnvm.rdma.RdmaMessageLayout.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The responder's side of one accepted queue pair (see {@link RdmaNicServer} for the design): its
 * {@link NicSession}, the keys it was given, and the execution of its two-sided messages through the node's
 * {@link EmulatedNic}. Called on the queue pair's completion thread, one message at a time.
 */
final class RdmaSession implements QueuePair.Listener {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaSession.class);
    /** Keys one reply carries at most (half a message; the rest is for the control reply). */
    static final int MAX_KEYS_PER_REPLY = (RdmaMessageLayout.MESSAGE_LENGTH - RdmaMessageLayout.RESPONSE_HEADER_LENGTH)
            / 2 / RdmaMessageLayout.KEY_LENGTH;

    private final EmulatedNic nic;
    private final KeySource keySource;
    private final Map<Integer, RdmaSession> frontends;
    private final QueuePair channel;
    private final NicSession session = new NicSession();
    private final Map<Integer, Access> handed = new HashMap<>();
    private final byte[] out = new byte[RdmaMessageLayout.MESSAGE_LENGTH];
    private volatile boolean closed;

    /** {@code frontends}: the live session bound to each frontend id, shared by every session of the server. */
    RdmaSession(EmulatedNic nic, KeySource keySource, Map<Integer, RdmaSession> frontends, QueuePair channel) {
        this.nic = nic;
        this.keySource = keySource;
        this.frontends = frontends;
        this.channel = channel;
    }

    NicSession nicSession() {
        return session;
    }

    @Override
    public void onMessage(QueuePair qp, ByteBuffer message, int length) {
        int seq = -1;
        int n;
        try {
            Request r = RdmaMessageLayout.decodeRequest(message, length);
            seq = r.seq();
            n = execute(r);
        } catch (AsymNvmException e) {
            n = error(seq, e.errorCode(), e.getMessage());
        } catch (RuntimeException e) {
            LOG.warn("rdma request failed on session {}", session.id(), e);
            n = error(seq, ErrorCode.UNKNOWN, e.toString());
        }
        try {
            channel.send(out, n, false);
        } catch (IOException e) {
            channel.fail("reply could not be posted: " + e);
        }
    }

    private int execute(Request r) {
        ByteBuffer dst = ByteBuffer.wrap(out);
        switch (r.type()) {
            case RdmaMessageLayout.REQ_CAS -> {
                long witness = nic.compareAndSwap(session, r.regionId(), r.offset(), r.arg1(), r.arg2());
                return RdmaMessageLayout.encodeResponse(dst, RdmaMessageLayout.RESP_ACK, r.seq(), null, witness, 0,
                        List.of(), null);
            }
            case RdmaMessageLayout.REQ_FLUSH -> {
                for (Range range : RdmaMessageLayout.flushRanges(r)) {
                    nic.recordRemoteWrite(session, range.regionId(), range.offset(), range.length());
                }
                long[] p = nic.flush(session, r.arg1(), r.arg2() == 1);
                return RdmaMessageLayout.encodeResponse(dst, RdmaMessageLayout.RESP_ACK, r.seq(), null, p[0], p[1],
                        List.of(), null);
            }
            case RdmaMessageLayout.REQ_CONTROL -> {
                byte[] reply = nic.control(session, r.payload());
                revokeFencedPredecessor();
                return RdmaMessageLayout.encodeResponse(dst, RdmaMessageLayout.RESP_DATA, r.seq(), null, 0, 0,
                        newKeys(-1), reply);
            }
            case RdmaMessageLayout.REQ_ACCESS -> {
                nic.checkAccess(session, r.regionId(), r.offset(), r.arg1(), r.arg2() == 1);
                return RdmaMessageLayout.encodeResponse(dst, RdmaMessageLayout.RESP_ACK, r.seq(), null, 0, 0,
                        newKeys(r.regionId()), null);
            }
            default -> throw new AsymNvmException(ErrorCode.UNKNOWN_FRAME_TYPE, "unknown rdma request type "
                    + r.type());
        }
    }

    /**
     * After a control call bound this session to a frontend whose previous session the control plane fenced (a
     * re-attach): re-register that frontend's regions before this session gets keys, so the fenced session's keys
     * stop working at the NIC, as its tcp operations would fail with STALE_EPOCH.
     */
    private void revokeFencedPredecessor() {
        int f = session.frontendId();
        if (f < 0) {
            return;
        }
        RdmaSession previous = frontends.put(f, this);
        if (previous != null && previous != this && previous.session.isFenced()) {
            try {
                keySource.rotate(f);
                LOG.info("frontend {} attached again (session {}): rdma keys of fenced session {} revoked", f,
                        session.id(), previous.session.id());
            } catch (IOException e) {
                throw new AsymNvmException(ErrorCode.UNKNOWN, "could not revoke the rdma keys of frontend " + f
                        + ": " + e);
            }
        }
    }

    /** Keys for grants not handed out yet (or changed), plus every key of {@code alwaysRegion}. */
    private List<Key> newKeys(int alwaysRegion) {
        List<Key> keys = new ArrayList<>();
        for (Map.Entry<Integer, Access> g : session.grants().entrySet()) {
            int region = g.getKey();
            if (region == alwaysRegion || handed.get(region) != g.getValue()) {
                List<Key> ks = keySource.keysFor(region, g.getValue());
                if (!ks.isEmpty()) {
                    keys.addAll(ks);
                    handed.put(region, g.getValue());
                }
            }
        }
        if (keys.size() > MAX_KEYS_PER_REPLY) {
            for (Key k : keys.subList(MAX_KEYS_PER_REPLY, keys.size())) {
                handed.remove(k.regionId()); // handed out by a later reply or an ACCESS verdict
            }
            return new ArrayList<>(keys.subList(0, MAX_KEYS_PER_REPLY));
        }
        return keys;
    }

    private int error(int seq, ErrorCode code, String message) {
        return RdmaMessageLayout.encodeResponse(ByteBuffer.wrap(out), RdmaMessageLayout.RESP_ERROR, seq, code, 0, 0,
                List.of(), RdmaMessageLayout.errorBody(message));
    }

    @Override
    public void onOneSided(QueuePair qp, long id) {
        // the responder posts no one-sided operations
    }

    @Override
    public void onFailure(QueuePair qp, String reason) {
        if (!closed) {
            closed = true;
            frontends.remove(session.frontendId(), this);
            LOG.debug("rdma session {} ended: {}", session.id(), reason);
            nic.closed(session);
            qp.closeQuietly();
        }
    }
}
