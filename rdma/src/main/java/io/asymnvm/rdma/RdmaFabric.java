package io.asymnvm.rdma;

import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.verbs.IbvMr;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.FabricUnavailableException;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * The requester side of the rdma fabric: one DiSNI active endpoint group (one completion queue and its thread per
 * device) for every connection this fabric opens. Each {@link #connect()} is one reliable-connected queue pair
 * with its own message buffers and registered staging memory ({@link RdmaOptions}). Opened only where
 * {@link RdmaProbe} found libdisni and a device; otherwise the constructor throws
 * {@link FabricUnavailableException} (the fabric SPI falls back to tcp before getting here).
 */
public final class RdmaFabric implements Fabric {
    private final InetSocketAddress address;
    private final RdmaOptions options;
    private final RdmaActiveEndpointGroup<RdmaChannel> group;

    public RdmaFabric(String host, int port, RdmaOptions options) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port out of range [1, 65535]: " + port);
        }
        RdmaProbe.Result probe = RdmaProbe.probe();
        if (!probe.available()) {
            throw new FabricUnavailableException("rdma", probe.reason());
        }
        this.address = new InetSocketAddress(host, port);
        this.options = options;
        try {
            this.group = new RdmaActiveEndpointGroup<>(options.connectTimeoutMillis(), false, maxWorkRequests(options),
                    1, completionQueueSize(options));
            group.init((id, serverSide) -> new RdmaChannel(group, id, serverSide, options.depth()));
        } catch (IOException | RuntimeException e) {
            throw new FabricUnavailableException("rdma", "DiSNI endpoint group could not be created: " + e);
        }
    }

    /** Send-queue entries a connection may use: its message buffers and one READ/WRITE per staging slot. */
    static int maxWorkRequests(RdmaOptions o) {
        return 2 * o.depth() + o.stagingSlots() + 8;
    }

    /** One completion queue per device serves every connection of the group: room for many at full depth. */
    static int completionQueueSize(RdmaOptions o) {
        return Math.max(4096, 8 * maxWorkRequests(o));
    }

    @Override
    public String name() {
        return "rdma";
    }

    /** Connects a queue pair; a refused or timed-out connect throws {@code CONNECTION_LOST} naming the address. */
    @Override
    public FabricConnection connect() {
        RdmaChannel channel = null;
        try {
            channel = group.createEndpoint();
            channel.connect(address, options.connectTimeoutMillis());
            ByteBuffer staging = ByteBuffer.allocateDirect((int) options.maxTransfer());
            IbvMr mr = channel.getPd().regMr(staging, IbvMr.IBV_ACCESS_LOCAL_WRITE).execute().free().getMr();
            RdmaChannel ch = channel;
            RdmaConnection connection = new RdmaConnection(channel, options, staging, mr.getAddr(), mr.getLkey(), () -> {
                try {
                    ch.deregisterMemory(mr);
                } catch (IOException | RuntimeException e) {
                    // released with the protection domain
                }
            });
            channel.listen(connection);
            return connection;
        } catch (Exception e) {
            if (channel != null) {
                channel.closeQuietly();
            }
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new AsymNvmException(ErrorCode.CONNECTION_LOST, "cannot connect over rdma to " + address + ": " + e,
                    e);
        }
    }

    @Override
    public void close() {
        try {
            group.close();
        } catch (IOException | RuntimeException e) {
            // endpoints are gone with the process anyway
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
