/**
 * Cluster configuration on ZooKeeper through Apache Curator (DESIGN §6, issue 9): the versioned configuration record
 * (epoch, backend, mirrors and their states, image identity), leases held through ephemeral nodes, failover of an
 * in-sync mirror with fencing by epoch, and the in-process ZooKeeper that one machine runs as the embedded default.
 * ZooKeeper decides everything that needs agreement (one versioned compare-and-set, one ephemeral znode); nothing
 * here votes or counts.
 *
 * <h2>Wiring</h2>
 * <pre>{@code
 * // ./asymnvm cluster --dir D : one ZooKeeper in this JVM
 * EmbeddedZooKeeper zk = EmbeddedZooKeeper.start(dir);                 // zk.connectString()
 * ClusterSession s = ClusterSession.connect(ClusterOptions.of(zk.connectString()));   // or --zk host:port,...
 * s.store().create(ClusterConfig.initial(superblock.identity(), new NodeEndpoint("b0", host, port)));
 *
 * // backend process, before it binds: refuses a stale epoch / foreign image, then holds the backend lease
 * BackendGuard guard = BackendGuard.start(s, "b0", superblock.identity(), superblock.epoch(),
 *         s.options().leaseMillis(), (config, why) -> server.fence(why));     // answer NOT_PRIMARY from then on
 *
 * // mirror process: joins as CATCHING_UP (CAS withMirror), the backend marks it IN_SYNC (CAS withMirrorState)
 * FailoverCoordinator fc = FailoverCoordinator.start(s, "m1", new Promotion() {
 *     public long finishReplay() { return mirror.finishReplay(); }          // applied txid; throw REPLICA_BEHIND
 *     public void promote(long epoch, ClusterConfig c) { mirror.serveAsBackend(epoch); }
 * });
 * // once fc.report() is present: BackendGuard.afterPromotion(s, "m1", config, fc.backendLease().get(), fence)
 *
 * // frontends: follow the backend
 * AutoCloseable w = s.store().watch(config -> frontend.retarget(config.backend(), config.epoch()));
 * }</pre>
 */
package io.asymnvm.cluster;
