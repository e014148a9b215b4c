package io.asymnvm.core.fabric;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;

/**
 * A fabric selected in strict mode cannot be used in this JVM (no provider on the class path, no native library,
 * no device). Carries {@link ErrorCode#CONNECTION_LOST}, the code a refused connect has: the node cannot be reached
 * over that transport. {@link #fabric()} names the fabric; the message says why.
 */
public final class FabricUnavailableException extends AsymNvmException {
    private final String fabric;

    public FabricUnavailableException(String fabric, String reason) {
        super(ErrorCode.CONNECTION_LOST, "fabric '" + fabric + "' is unavailable: " + reason);
        this.fabric = fabric;
    }

    public String fabric() {
        return fabric;
    }
}
