package io.asymnvm.cluster;

/**
 * The timeline of one promotion, as measured by the promoted mirror's {@link FailoverCoordinator}.
 *
 * <p>Detection (the backend's death, or the cut of its connection, until this mirror noticed the lease was gone) is
 * the session timeout plus ZooKeeper's tick plus the watch delivery; it is measured by whoever knows when the
 * backend died, as {@code noticedAtMillis - killedAtMillis} ({@link #detectionMillisSince(long)}), since the
 * mirror cannot see the backend's last heartbeat. The rest is measured here with a monotonic clock.
 *
 * @param nodeId the promoted mirror
 * @param oldEpoch the epoch of the lost backend
 * @param newEpoch the epoch this mirror serves
 * @param appliedTxId last transaction applied when replay finished
 * @param noticedAtMillis wall-clock time the lease's deletion was noticed (comparable across processes of a host)
 * @param configCommitNanos noticed until the configuration naming this mirror was committed
 * @param promotionNanos noticed until {@link Promotion#promote} returned (serving)
 */
public record FailoverReport(String nodeId, long oldEpoch, long newEpoch, long appliedTxId, long noticedAtMillis,
        long configCommitNanos, long promotionNanos) {

    /** Detection time for a failure that happened at {@code failedAtMillis} (wall clock). */
    public long detectionMillisSince(long failedAtMillis) {
        return noticedAtMillis - failedAtMillis;
    }
}
