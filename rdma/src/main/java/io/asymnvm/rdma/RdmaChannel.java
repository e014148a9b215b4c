package io.asymnvm.rdma;

import com.ibm.disni.RdmaActiveEndpoint;
import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.LinkedList;
import java.util.List;

/**
 * One reliable-connected queue pair (a DiSNI active endpoint) with its message buffers: {@code depth} receive
 * buffers posted before the connection is established and reposted after each message, and {@code 2 * depth} send
 * buffers, each {@link RdmaMessageLayout#MESSAGE_LENGTH} bytes, registered for local access only. Used by both sides:
 * the requester ({@link RdmaConnection}) and the responder's sessions ({@link RdmaNicServer}).
 *
 * <p>Threading: completions arrive on DiSNI's completion-queue thread, which calls the {@link Listener}; sends may be
 * posted from any thread. A send finding no free buffer is queued and posted when a send completes (never blocks the
 * completion thread, which is the one that frees buffers).
 */
final class RdmaChannel extends RdmaActiveEndpoint implements QueuePair {
    /** Work request ids: the top byte says what completed, the rest is a slot index or an operation id. */
    static final long TAG_RECV = 1L << 56;
    static final long TAG_SEND = 2L << 56;
    static final long TAG_ONE_SIDED = 3L << 56;
    private static final long TAG_MASK = 0xFFL << 56;

    private final int depth;
    private volatile Listener listener;
    private volatile String failure;
    private final ByteBuffer recvBuffers;
    private final ByteBuffer sendBuffers;
    private final ArrayDeque<Integer> freeSendSlots = new ArrayDeque<>();
    private final ArrayDeque<byte[]> queuedSends = new ArrayDeque<>();
    private IbvMr recvMr;
    private IbvMr sendMr;
    private SVCPostRecv[] recvCalls;
    private SVCPostSend[] sendCalls;
    private volatile boolean failed;

    RdmaChannel(RdmaActiveEndpointGroup<RdmaChannel> group, RdmaCmId id, boolean serverSide, int depth)
            throws IOException {
        super(group, id, serverSide);
        this.depth = depth;
        this.recvBuffers = ByteBuffer.allocateDirect(depth * RdmaMessageLayout.MESSAGE_LENGTH);
        this.sendBuffers = ByteBuffer.allocateDirect(2 * depth * RdmaMessageLayout.MESSAGE_LENGTH);
    }

    /** Registers the message buffers and posts every receive, before the connection is established. */
    @Override
    protected synchronized void init() throws IOException {
        super.init();
        recvMr = getPd().regMr(recvBuffers, IbvMr.IBV_ACCESS_LOCAL_WRITE).execute().free().getMr();
        sendMr = getPd().regMr(sendBuffers, IbvMr.IBV_ACCESS_LOCAL_WRITE).execute().free().getMr();
        recvCalls = new SVCPostRecv[depth];
        for (int i = 0; i < depth; i++) {
            IbvSge sge = new IbvSge();
            sge.setAddr(recvMr.getAddr() + (long) i * RdmaMessageLayout.MESSAGE_LENGTH);
            sge.setLength(RdmaMessageLayout.MESSAGE_LENGTH);
            sge.setLkey(recvMr.getLkey());
            LinkedList<IbvSge> sges = new LinkedList<>();
            sges.add(sge);
            IbvRecvWR wr = new IbvRecvWR();
            wr.setWr_id(TAG_RECV | i);
            wr.setSg_list(sges);
            recvCalls[i] = postRecv(List.of(wr));
            recvCalls[i].execute();
        }
        sendCalls = new SVCPostSend[2 * depth];
        for (int i = 0; i < 2 * depth; i++) {
            IbvSge sge = new IbvSge();
            sge.setAddr(sendMr.getAddr() + (long) i * RdmaMessageLayout.MESSAGE_LENGTH);
            sge.setLength(RdmaMessageLayout.MESSAGE_LENGTH);
            sge.setLkey(sendMr.getLkey());
            LinkedList<IbvSge> sges = new LinkedList<>();
            sges.add(sge);
            IbvSendWR wr = new IbvSendWR();
            wr.setWr_id(TAG_SEND | i);
            wr.setOpcode(IbvSendWR.IBV_WR_SEND);
            wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
            wr.setSg_list(sges);
            sendCalls[i] = postSend(List.of(wr));
            synchronized (freeSendSlots) {
                freeSendSlots.add(i);
            }
        }
    }

    /** A SEND with {@code fence} carries IBV_SEND_FENCE, so a message never overtakes an earlier RDMA READ. */
    @Override
    public void send(byte[] message, int length, boolean fence) throws IOException {
        int slot;
        synchronized (freeSendSlots) {
            Integer s = queuedSends.isEmpty() ? freeSendSlots.poll() : null;
            if (s == null) {
                byte[] copy = java.util.Arrays.copyOf(message, length);
                queuedSends.add(copy); // posted fenced later: once a send waits, order is all that matters
                return;
            }
            slot = s;
        }
        postSendSlot(slot, message, length, fence);
    }

    private void postSendSlot(int slot, byte[] message, int length, boolean fence) throws IOException {
        ByteBuffer dst = sendBuffers.duplicate();
        dst.position(slot * RdmaMessageLayout.MESSAGE_LENGTH);
        dst.put(message, 0, length);
        SVCPostSend call = sendCalls[slot];
        SVCPostSend.SendWRMod wr = call.getWrMod(0);
        wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED | (fence ? IbvSendWR.IBV_SEND_FENCE : 0));
        wr.getSgeMod(0).setLength(length);
        call.execute();
    }

    @Override
    public void postOneSided(boolean write, long localAddress, int lkey, int length, long remoteAddress, int rkey,
                             long id) throws IOException {
        int opcode = write ? IbvSendWR.IBV_WR_RDMA_WRITE : IbvSendWR.IBV_WR_RDMA_READ;
        boolean fence = write;
        IbvSge sge = new IbvSge();
        sge.setAddr(localAddress);
        sge.setLength(length);
        sge.setLkey(lkey);
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(sge);
        IbvSendWR wr = new IbvSendWR();
        wr.setWr_id(TAG_ONE_SIDED | id);
        wr.setOpcode(opcode);
        wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED | (fence ? IbvSendWR.IBV_SEND_FENCE : 0));
        wr.setSg_list(sges);
        wr.getRdma().setRemote_addr(remoteAddress);
        wr.getRdma().setRkey(rkey);
        postSend(List.of(wr)).execute().free();
    }

    @Override
    public void dispatchCqEvent(IbvWC wc) throws IOException {
        long wrId = wc.getWr_id();
        if (wc.getStatus() != IbvWC.IbvWcStatus.IBV_WC_SUCCESS.ordinal()) {
            fail("work request " + Long.toHexString(wrId) + " failed with "
                    + statusName(wc.getStatus()) + " (vendor error " + wc.getVendor_err() + ")");
            return;
        }
        long tag = wrId & TAG_MASK;
        long index = wrId & ~TAG_MASK;
        if (tag == TAG_RECV) {
            // copy out and repost at once: the peer may send again as soon as it sees the reply to this message
            int slot = (int) index;
            int length = Math.min(wc.getByte_len(), RdmaMessageLayout.MESSAGE_LENGTH);
            byte[] copy = new byte[length];
            ByteBuffer message = recvBuffers.duplicate();
            message.position(slot * RdmaMessageLayout.MESSAGE_LENGTH);
            message.get(copy);
            recvCalls[slot].execute();
            Listener l = listener;
            if (l != null) {
                l.onMessage(this, ByteBuffer.wrap(copy), length);
            }
        } else if (tag == TAG_SEND) {
            sendCompleted((int) index);
        } else {
            Listener l = listener;
            if (l != null) {
                l.onOneSided(this, index);
            }
        }
    }

    private void sendCompleted(int slot) throws IOException {
        byte[] next;
        synchronized (freeSendSlots) {
            next = queuedSends.poll();
            if (next == null) {
                freeSendSlots.add(slot);
                return;
            }
        }
        postSendSlot(slot, next, next.length, true);
    }

    @Override
    public synchronized void dispatchCmEvent(RdmaCmEvent event) throws IOException {
        super.dispatchCmEvent(event);
        if (event.getEvent() == RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED.ordinal()) {
            fail("disconnected by the peer");
        }
    }

    /**
     * Sets who hears this channel's events. The responder sets it when the endpoint is created (before any message
     * can arrive); the requester after connecting, before its first send. A failure before then is delivered here.
     */
    @Override
    public void listen(Listener l) {
        listener = l;
        String f = failure;
        if (f != null) {
            l.onFailure(this, f);
        }
    }

    @Override
    public synchronized void fail(String reason) {
        if (!failed) {
            failed = true;
            failure = reason;
            Listener l = listener;
            if (l != null) {
                l.onFailure(this, reason);
            }
        }
    }

    /** Closes the queue pair and deregisters the message buffers; never throws. */
    @Override
    public void closeQuietly() {
        try {
            close();
        } catch (IOException | RuntimeException e) {
            // the peer may be gone already
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (IbvMr mr : new IbvMr[] {recvMr, sendMr}) {
            if (mr != null) {
                try {
                    deregisterMemory(mr);
                } catch (IOException | RuntimeException e) {
                    // released with the protection domain
                }
            }
        }
    }

    private static String statusName(int status) {
        try {
            return IbvWC.IbvWcStatus.valueOf(status).name();
        } catch (IllegalArgumentException e) {
            return "status " + status;
        }
    }
}
