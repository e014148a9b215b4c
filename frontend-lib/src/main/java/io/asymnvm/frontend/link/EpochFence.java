package io.asymnvm.frontend.link;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The highest backend epoch one frontend has seen, shared by every link it opens (its backend, its mirrors and,
 * after a failover, the promoted mirror). A node answering an attach with a lower epoch is a backend that was
 * replaced (DESIGN §6, fencing by epoch): it is refused before this frontend writes anything to it.
 */
public final class EpochFence {
    private final AtomicLong highest = new AtomicLong();

    public long highest() {
        return highest.get();
    }

    /** Refuses {@code reply} from {@code endpoint} if its epoch is older than the highest seen. */
    public void check(AttachReply reply, String endpoint) {
        long seen = highest.get();
        if (reply.backendEpoch() < seen) {
            throw new AsymNvmException(ErrorCode.STALE_EPOCH, endpoint + " answers with backend epoch "
                    + reply.backendEpoch() + " but this frontend has seen epoch " + seen
                    + ": a replaced backend never gets a write");
        }
    }

    /** {@link #check}, then records the reply's epoch as seen (the serving backend's attach). */
    public void observe(AttachReply reply, String endpoint) {
        check(reply, endpoint);
        highest.accumulateAndGet(reply.backendEpoch(), Math::max);
    }
}
