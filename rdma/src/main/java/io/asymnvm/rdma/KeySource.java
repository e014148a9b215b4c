package io.asymnvm.rdma;

import io.asymnvm.core.fabric.Access;
import io.asymnvm.rdma.RdmaMessageLayout.Key;

import java.io.IOException;
import java.util.List;

/** The responder's registered memory as sessions see it: keys per grant, and revocation of a frontend's keys. */
interface KeySource {

    /** Keys for a session granted {@code grant} on {@code regionId}; empty if the region is not registered. */
    List<Key> keysFor(int regionId, Access grant);

    /** Replaces the registrations of {@code frontendId}'s regions: keys handed out before stop working. */
    void rotate(int frontendId) throws IOException;
}
