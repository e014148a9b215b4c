package io.asymnvm.backend.control;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.asymnvm.backend.log.FrontendLog;
import io.asymnvm.core.fabric.NicSession;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.recovery.log.RingDamage;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The answer to {@link ControlMessageLayout#KIND_STATUS}: the operational state of every frontend that ever
 * attached, is quarantined or has its replay stopped (attached now, attach epoch, applied transaction, quarantine
 * with ring, offset, expected and actual values, replay fault), as JSON (format in {@link ControlMessageLayout}).
 *
 * <p>An operator asks for it without attaching as a frontend. It reveals operational state only: no heap bytes,
 * no log contents, no names of roots, no credentials; when the backend authenticates its clients, whether status
 * needs authentication too is that mechanism's decision. Thread-safe (reads volatile state).
 */
final class BackendStatus {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private BackendStatus() {
    }

    static byte[] encode(Superblock sb, FrontendLog[] logs, Map<Integer, NicSession> sessions,
                         io.asymnvm.backend.mirror.ReplicationService replication) {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("backend_epoch", replication == null ? sb.epoch() : replication.epoch());
        if (replication != null) {
            replication.describe(root); // role, epoch, state, mirrors (issue 9)
        }
        root.put("identity", sb.identity().toString());
        root.put("max_frontends", logs.length);
        ArrayNode frontends = root.putArray("frontends");
        for (FrontendLog log : logs) {
            long epoch = log.currentEpoch();
            RingDamage q = log.quarantine();
            if (epoch == 0 && q == null && log.fault() == null) {
                continue;
            }
            NicSession session = sessions.get(log.frontendId());
            ObjectNode f = frontends.addObject();
            f.put("id", log.frontendId());
            f.put("attached", session != null && !session.isFenced());
            f.put("attach_epoch", epoch);
            f.put("applied_tx", log.checkpoint().appliedTxId());
            f.put("quarantined", q != null);
            if (q != null) {
                f.putObject("quarantine").put("ring", q.ring()).put("offset", q.offset()).put("what", q.what())
                        .put("expected", q.expected()).put("actual", q.actual())
                        .put("message", q.refusal(log.frontendId()).detail());
            }
            f.put("replay_fault", log.fault());
        }
        try {
            return MAPPER.writeValueAsString(root).getBytes(StandardCharsets.UTF_8);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("status JSON", e);
        }
    }
}
