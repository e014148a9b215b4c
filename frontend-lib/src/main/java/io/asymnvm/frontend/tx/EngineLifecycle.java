package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.frontend.CacheIncoherentException;

import java.util.concurrent.locks.LockSupport;

/**
 * How a {@link TransactionEngine} stops, and the check that it still may serve: the clean detach ({@link #close}),
 * the crash-like stop of tests and drills ({@link #abandon}), and {@link #checkUsable}, which every public call makes
 * first (superseded after a failover, lost its backend, or closed). Moved out of the engine unchanged; the state
 * ({@code running}, {@code fatal}, {@code successor}, the agent thread, the links) stays on the engine.
 */
final class EngineLifecycle {
    private final TransactionEngine engine;

    EngineLifecycle(TransactionEngine engine) {
        this.engine = engine;
    }

    /**
     * Throws {@link Superseded} if a successor serves this frontend, the cause if the backend was lost (a
     * {@link CacheIncoherentException} unchanged), or {@link IllegalStateException} once closed.
     */
    void checkUsable() {
        TransactionEngine next = engine.successor;
        if (next != null) {
            throw new Superseded(next);
        }
        AsymNvmException f = engine.fatal;
        if (f instanceof CacheIncoherentException ci) {
            throw ci;
        }
        if (f != null) {
            throw new AsymNvmException(f.errorCode(), "frontend " + engine.frontendId + " lost its backend: "
                    + f.getMessage(), f);
        }
        if (!engine.running) {
            throw new IllegalStateException("frontend " + engine.frontendId + " is closed");
        }
    }

    /** Clean detach: ship and apply everything, stop the agent, tell the backend, close the connection. */
    void close() {
        if (!engine.running) {
            return;
        }
        try {
            if (engine.fatal == null) {
                engine.sync();
            }
        } finally {
            engine.running = false;
            LockSupport.unpark(engine.agent);
            try {
                engine.agent.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            try {
                if (engine.fatal == null) {
                    engine.link.call(ControlMessageLayout.KIND_DETACH, 0);
                }
            } finally {
                engine.link.close();
                if (engine.mirrors != null) {
                    engine.mirrors.close();
                }
            }
        }
    }

    /** Stops without flushing or detaching, as a crash would (tests and drills). */
    void abandon() {
        engine.running = false;
        engine.fatal = new AsymNvmException(ErrorCode.CONNECTION_LOST, "frontend abandoned");
        LockSupport.unpark(engine.agent);
        engine.link.close();
        if (engine.mirrors != null) {
            engine.mirrors.close();
        }
    }
}
