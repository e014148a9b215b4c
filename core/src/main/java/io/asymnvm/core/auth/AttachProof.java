package io.asymnvm.core.auth;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlMessageLayout;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;

/**
 * The response to a backend's challenge: HMAC-SHA256(secret, nonce || frontendId || expectedEpoch), the message
 * laid out by {@link ControlMessageLayout#proofMessage}. The nonce is single use on the backend, so a captured
 * proof is worth nothing on another connection or in a second attempt. Stateless and thread-safe.
 */
public final class AttachProof {
    static final String ALGORITHM = "HmacSHA256";

    private AttachProof() {
    }

    /** The proof of a frontend holding {@code secret}; {@link ControlMessageLayout#PROOF_LENGTH} bytes. */
    public static byte[] compute(byte[] secret, byte[] nonce, int frontendId, long expectedEpoch) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(secret, ALGORITHM));
            return mac.doFinal(ControlMessageLayout.proofMessage(nonce, frontendId, expectedEpoch));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("JDK without " + ALGORITHM + ": " + e.getMessage(), e);
        }
    }

    /**
     * Asks the backend on {@code c} for a challenge and returns the ATTACH request that answers it: the request a
     * frontend holding {@code secret} sends next on the same connection. {@code identity} is the PM image a
     * reconnecting incarnation was attached to (null for a new one).
     */
    public static byte[] attachRequest(FabricConnection c, byte[] secret, int frontendId, long expectedEpoch,
                                       java.util.UUID identity) {
        byte[] nonce = c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_CHALLENGE, frontendId, 0))
                .await().bytes();
        if (nonce.length != ControlMessageLayout.NONCE_LENGTH) {
            throw new AsymNvmException(ErrorCode.MALFORMED_FRAME, "challenge of " + nonce.length
                    + " bytes, expected " + ControlMessageLayout.NONCE_LENGTH);
        }
        return ControlMessageLayout.authenticatedAttachRequest(frontendId, expectedEpoch, identity,
                compute(secret, nonce, frontendId, expectedEpoch));
    }

    /** Constant-time comparison of {@code proof} with the one {@code secret} gives. */
    public static boolean verify(byte[] secret, byte[] nonce, int frontendId, long expectedEpoch, byte[] proof) {
        return MessageDigest.isEqual(compute(secret, nonce, frontendId, expectedEpoch), proof);
    }
}
