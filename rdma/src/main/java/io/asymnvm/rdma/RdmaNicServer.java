package io.asymnvm.rdma;

import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.RdmaServerEndpoint;
import io.asymnvm.core.fabric.Access;
import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.fabric.FabricUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;

/**
 * The responder of the rdma fabric: registers the node's PM windows with the device, accepts queue pairs, and
 * executes the two-sided messages ({@link RdmaMessageLayout}) through the node's {@link EmulatedNic}, so the control
 * plane, access checks, FLUSH persistence and the durable-watermark guard are the same code as on tcp.
 *
 * <h2>Design: one-sided access bypasses the per-session grants</h2>
 * On tcp every READ and WRITE passes {@code NicSession.checkAccess}: the control plane's grants are enforced per
 * operation. An RDMA READ or WRITE never reaches this process; the NIC checks only that the rkey names a memory
 * region registered with the needed access in the queue pair's protection domain. The grants are therefore
 * enforced by what is registered and who is told the keys:
 * <ol>
 * <li><b>Register per region, with the least access.</b> Each window of the region table is its own memory region
 *     (per 1 GiB mapping chunk). The heap and the control blocks are registered remote-read only: no key anyone
 *     holds can write them, whatever a client sends (frontends change the heap only through redo, which the
 *     replayer applies). A frontend's semantic and redo rings are registered remote-write, and a second time
 *     read-only, so a session granted READ gets a key the NIC refuses to write through. The policy is a
 *     parameter, so it can follow the control plane's grants.
 * <li><b>Keys only for grants.</b> An rkey is handed out only in a reply to a control call (the attach and
 *     anything after it that grants more) or an ACCESS verdict, and only for regions the session holds a grant
 *     for at that moment, with the access of that grant. A session that is not attached learns no key; its
 *     READ/WRITE become ACCESS messages that {@code EmulatedNic} refuses with the same codes as tcp.
 * <li><b>Fencing revokes keys.</b> When a session attaches as a frontend whose previous session the control
 *     plane fenced, that frontend's windows are registered again before the new session gets its keys: the old session's rkeys
 *     stop working at the NIC (its next one-sided operation fails with a remote access error and its queue pair
 *     goes to the error state), the RDMA equivalent of the tcp session's STALE_EPOCH fence.
 * </ol>
 * What this does not give: rkeys are 32-bit values that a peer in the same protection domain could guess, and
 * DiSNI 2.x shares one protection domain per device; a read-only heap key lets an attached frontend read the whole
 * heap (as tcp's READ grant on the heap does). Tenants that must not read each other need per-session protection
 * domains or memory windows (type 2, bound per queue pair), which DiSNI 2.x does not expose.
 *
 * <p>Each accepted queue pair is an {@link RdmaSession}. Threading: messages of all sessions are executed on DiSNI's completion-queue thread, one at a time, as the tcp
 * responder executes all connections on its one worker thread; replies are posted from it.
 */
public final class RdmaNicServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaNicServer.class);
    private static final int BACKLOG = 64;

    private final EmulatedNic nic;
    private final InetSocketAddress bindAddress;
    private final IntFunction<Access> registrationPolicy;
    private final RdmaOptions options;
    private final Map<Integer, RdmaSession> frontends = new ConcurrentHashMap<>();
    private RdmaActiveEndpointGroup<RdmaChannel> group;
    private RdmaServerEndpoint<RdmaChannel> server;
    private RegisteredRegions regions;
    private Thread acceptor;
    private volatile boolean closing;

    /** A server with the default registration policy (rings remote-write; heap and control blocks remote-read). */
    public RdmaNicServer(EmulatedNic nic, InetSocketAddress bindAddress) {
        this(nic, bindAddress, RegisteredRegions.DEFAULT_POLICY, RdmaOptions.defaults());
    }

    /** {@code registrationPolicy}: the most any grant on a region id allows, which its registration permits. */
    public RdmaNicServer(EmulatedNic nic, InetSocketAddress bindAddress, IntFunction<Access> registrationPolicy,
                         RdmaOptions options) {
        this.nic = nic;
        this.bindAddress = bindAddress;
        this.registrationPolicy = registrationPolicy;
        this.options = options;
    }

    /** Probes, binds, registers every window and starts accepting; unavailable rdma is a typed error. */
    public synchronized RdmaNicServer start() {
        RdmaProbe.Result probe = RdmaProbe.probe();
        if (!probe.available()) {
            throw new FabricUnavailableException("rdma", probe.reason());
        }
        try {
            group = new RdmaActiveEndpointGroup<>(options.connectTimeoutMillis(), false,
                    RdmaFabric.maxWorkRequests(options), 1, RdmaFabric.completionQueueSize(options));
            group.init((id, serverSide) -> {
                RdmaChannel ch = new RdmaChannel(group, id, serverSide, options.depth());
                ch.listen(new RdmaSession(nic, regions, frontends, ch));
                return ch;
            });
            server = group.createServerEndpoint();
            server.bind(bindAddress, BACKLOG);
            regions = new RegisteredRegions(server.getPd(), registrationPolicy);
            regions.registerAll(nic.regions());
        } catch (Exception e) {
            close();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            if (e instanceof IllegalArgumentException iae) {
                throw iae;
            }
            throw new IllegalArgumentException("cannot serve rdma on " + bindAddress + ": " + e, e);
        }
        acceptor = new Thread(this::acceptLoop, "asymnvm-rdma-accept");
        acceptor.setDaemon(true);
        acceptor.start();
        LOG.info("rdma NIC listening on {}", bindAddress);
        return this;
    }

    /** The bound port (the requested one, or the one the connection manager chose for port 0). */
    public int port() {
        try {
            return ((InetSocketAddress) server.getSrcAddr()).getPort();
        } catch (Exception e) {
            return bindAddress.getPort();
        }
    }

    private void acceptLoop() {
        while (!closing) {
            try {
                server.accept(); // the session was attached to its channel when the endpoint was created
            } catch (IOException | RuntimeException e) {
                if (!closing) {
                    LOG.warn("rdma accept failed: {}", e.toString());
                }
            }
        }
    }

    @Override
    public synchronized void close() {
        closing = true;
        if (acceptor != null) {
            acceptor.interrupt(); // DiSNI's accept waits without a timeout; interruption ends it
            acceptor = null;
        }
        try {
            if (server != null) {
                server.close();
            }
            if (group != null) {
                group.close();
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("rdma close: {}", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (regions != null) {
                regions.close();
            }
            server = null;
            group = null;
            regions = null;
        }
    }
}
