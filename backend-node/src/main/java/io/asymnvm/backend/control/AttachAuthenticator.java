package io.asymnvm.backend.control;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.auth.AttachProof;
import io.asymnvm.core.auth.FrontendCredentials;
import io.asymnvm.core.fabric.NicSession;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.logging.RateLimitedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;
import java.util.concurrent.atomic.LongAdder;

/**
 * The backend's gate for connections from other processes. A session first asks for a CHALLENGE (a fresh
 * random nonce, remembered on the session); its ATTACH carries HMAC-SHA256(secret of the frontend, nonce ||
 * frontendId || expectedEpoch), which is checked in constant time before the control plane fences or grants
 * anything. Every ATTACH consumes the outstanding nonce whether it succeeds or not, so a captured proof can be
 * replayed neither on its own connection nor on another. Until a session attached, every control call but
 * CHALLENGE, ATTACH and PING is refused with {@code AUTH_REQUIRED}, and one-sided operations find no grant.
 *
 * <p>In-process ({@code local}) sessions need no proof. With authentication off ({@link #insecure()}) nothing is
 * checked. Every refusal is counted ({@link #refusals()}, exact) and logged at WARN, at most one line per second
 * per refusal code (the next line counts those left out); a refused peer fences no one.
 * Thread-safe.
 */
public final class AttachAuthenticator {
    private static final Logger LOG = LoggerFactory.getLogger(AttachAuthenticator.class);

    private final FrontendCredentials credentials;
    private final SecureRandom random = new SecureRandom();
    private final LongAdder refusals = new LongAdder();

    /** One rate-limited WARN line per refusal code (AUTH_REQUIRED, AUTH_FAILED): a peer cannot flood the log. */
    private final Map<ErrorCode, RateLimitedLog> refusalLogs = new EnumMap<>(ErrorCode.class);

    private AttachAuthenticator(FrontendCredentials credentials) {
        this(credentials, LOG::warn, System::nanoTime);
    }

    /** {@code warnSink} and {@code nanoClock}: where refusal lines go and the clock of their rate limit (tests). */
    AttachAuthenticator(FrontendCredentials credentials, BiConsumer<String, Throwable> warnSink, LongSupplier nanoClock) {
        this.credentials = credentials;
        for (ErrorCode code : List.of(ErrorCode.AUTH_REQUIRED, ErrorCode.AUTH_FAILED)) {
            refusalLogs.put(code, new RateLimitedLog(warnSink, nanoClock, RateLimitedLog.DEFAULT_INTERVAL_MILLIS));
        }
    }

    /** Authentication on: each tcp frontend proves it holds its secret in {@code credentials}. */
    public static AttachAuthenticator of(FrontendCredentials credentials) {
        return new AttachAuthenticator(java.util.Objects.requireNonNull(credentials, "credentials"));
    }

    /** Authentication off: any peer that reaches the port may attach as any frontend. */
    public static AttachAuthenticator insecure() {
        return new AttachAuthenticator(null);
    }

    public boolean required() {
        return credentials != null;
    }

    /** Control calls refused for authentication since start. */
    public long refusals() {
        return refusals.sum();
    }

    /** Issues a fresh nonce to {@code session}, replacing any unused one. */
    byte[] challenge(NicSession session) {
        byte[] nonce = new byte[ControlMessageLayout.NONCE_LENGTH];
        random.nextBytes(nonce);
        session.offerChallenge(nonce);
        return nonce;
    }

    /** Refuses any call but CHALLENGE, ATTACH and PING on a session that has not attached with a proof. */
    void checkControl(NicSession session, int kind) {
        if (!mustProve(session) || session.frontendId() >= 0 || kind == ControlMessageLayout.KIND_CHALLENGE
                || kind == ControlMessageLayout.KIND_ATTACH || kind == ControlMessageLayout.KIND_PING
                || kind == ControlMessageLayout.KIND_STATUS // operational state only, no data (README "Security")
                || isReplication(kind)) { // each proves the replication secret itself (verifyReplication)
            return;
        }
        throw refuse(ErrorCode.AUTH_REQUIRED, "control call of kind " + kind + " on session " + session.id()
                + " before an authenticated attach");
    }

    /**
     * Checks the proof of an ATTACH as {@code frontendId}; throws {@code AUTH_REQUIRED} when it carries none and
     * {@code AUTH_FAILED} when it is wrong, stale or answers no challenge of this session.
     */
    void verifyAttach(NicSession session, int frontendId, long expectedEpoch, byte[] proof) {
        byte[] nonce = session.takeChallenge(); // single use, whatever follows
        if (!mustProve(session)) {
            return;
        }
        if (proof == null) {
            throw refuse(ErrorCode.AUTH_REQUIRED, "frontend " + frontendId + " attached without a credential: "
                    + "this backend requires authentication; pass the credentials file it created "
                    + "(--credentials FILE, FrontendOptions.credentials)");
        }
        if (nonce == null) {
            throw refuse(ErrorCode.AUTH_FAILED, "frontend " + frontendId + " attached with a proof but session "
                    + session.id() + " has no unused challenge (each challenge serves one attach)");
        }
        if (!credentials.hasSecret(frontendId)) {
            throw refuse(ErrorCode.AUTH_FAILED, "no credential for frontend " + frontendId
                    + " in this backend's credentials file");
        }
        if (!AttachProof.verify(credentials.secret(frontendId), nonce, frontendId, expectedEpoch, proof)) {
            throw refuse(ErrorCode.AUTH_FAILED, "the proof of frontend " + frontendId
                    + " does not match its credential");
        }
    }

    // ---- replication (mirrors): the peer calls carry a proof of the replication secret ----

    private static boolean isReplication(int kind) {
        return kind == ControlMessageLayout.KIND_PEER_ATTACH || kind == ControlMessageLayout.KIND_PROMOTE
                || kind == io.asymnvm.core.layout.ReplicationLayout.KIND_ADD_MIRROR
                || kind == io.asymnvm.core.layout.ReplicationLayout.KIND_REPLICATE;
    }

    /** The replication secret this node proves to its peers with, or null when authentication is off. */
    public byte[] replicationSecret() {
        return credentials == null ? null : credentials.replicationSecret();
    }

    /**
     * Checks the proof of a replication call ({@code purpose}, {@code arg}: see
     * {@link io.asymnvm.core.layout.ReplicationLayout}) against the replication secret and the session's challenge
     * (consumed whatever follows): {@code AUTH_FAILED} when it is wrong, stale, answers no challenge, or this
     * node's credentials file holds no replication secret.
     */
    public void verifyReplication(NicSession session, int purpose, long arg, byte[] proof) {
        byte[] nonce = session.takeChallenge();
        if (!mustProve(session)) {
            return;
        }
        if (nonce == null) {
            throw refuse(ErrorCode.AUTH_FAILED, "replication call (purpose " + purpose + ") on session "
                    + session.id() + " answers no challenge of this session (each challenge serves one call)");
        }
        if (!credentials.hasReplicationSecret()) {
            throw refuse(ErrorCode.AUTH_FAILED, "replication call refused: credentials file " + credentials.file()
                    + " holds no replication secret");
        }
        if (!AttachProof.verify(credentials.replicationSecret(), nonce, purpose, arg, proof)) {
            throw refuse(ErrorCode.AUTH_FAILED, "replication call (purpose " + purpose + ") on session "
                    + session.id() + ": the proof does not match this node's replication secret");
        }
    }

    private boolean mustProve(NicSession session) {
        return credentials != null && !session.isInProcess();
    }

    private AsymNvmException refuse(ErrorCode code, String message) {
        refusals.increment();
        refusalLogs.get(code).log("authentication refused ({}): {}; {} refusals so far", code, message,
                refusals.sum());
        return new AsymNvmException(code, message);
    }
}
