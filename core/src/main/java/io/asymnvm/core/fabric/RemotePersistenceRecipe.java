package io.asymnvm.core.fabric;

/**
 * How a requester makes a remote WRITE durable, chosen from the responder's persistence domain and DDIO
 * setting (after "Correct, Fast Remote Persistence"):
 *
 * <pre>
 * domain        DDIO   recipe
 * ADR           on     WRITE, then FLUSH: the responder writes back the written lines (two-sided on RDMA)
 * ADR           off    WRITE, then FLUSH: on RDMA a READ-after-WRITE drains the PCIe path; on the emulated NIC
 *                      the responder still persists, as the emulator's stores go through the CPU caches
 * EADR          any    WRITE, then wait for its completion: caches are inside the persistence domain
 * WHOLE_SYSTEM  any    WRITE, then wait for its completion
 * </pre>
 * Either way the commit waits for exactly one round trip.
 */
public enum RemotePersistenceRecipe {
    FLUSH_AFTER_WRITE(1),
    COMPLETION(2);

    private final int wireValue;

    RemotePersistenceRecipe(int wireValue) {
        this.wireValue = wireValue;
    }

    public int wireValue() {
        return wireValue;
    }

    public static RemotePersistenceRecipe fromWire(int v) {
        for (RemotePersistenceRecipe r : values()) {
            if (r.wireValue == v) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown remote persistence recipe: " + v);
    }

    public static RemotePersistenceRecipe forDomain(PersistenceDomain domain, boolean ddio) {
        return domain == PersistenceDomain.ADR ? FLUSH_AFTER_WRITE : COMPLETION;
    }
}
