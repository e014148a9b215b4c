package io.asymnvm.structures;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.structures.codec.Codecs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 7, item 11: several frontends create the same name at the same moment. Exactly one may proceed; the others
 * are refused with {@code NAME_TAKEN} before their creating transaction runs, so no acknowledged data ends up
 * under a name its frontend cannot reach. Before the fix all three loads succeeded and two of them became
 * unreachable.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ConcurrentNameTest {
    private static final int FRONTENDS = 3;
    private static final int ROUNDS = 4;
    private static final int KEYS = 200;

    /** A store over one hash map opened by name: the open claims the name, the first put creates it. */
    public interface Loader {
        @PersistentTransaction
        void put(long key, String value);

        @PersistentTransaction(readOnly = true)
        String get(long key);
    }

    static final class LoaderImpl implements Loader {
        private final PersistentHashMap<Long, String> map;

        LoaderImpl(AsymNvm nvm, String name) {
            this.map = PersistentHashMap.open(nvm, name, Codecs.LONG, Codecs.STRING);
        }

        @Override
        public void put(long key, String value) {
            map.put(key, value);
        }

        @Override
        public String get(long key) {
            return map.get(key);
        }
    }

    @TempDir
    Path dir;

    private BackendNode start(Nvm.Transport transport) {
        return BackendNode.start(BackendConfiguration.builder(dir.resolve("backend.pm")).size(160L << 20)
                .maxFrontends(FRONTENDS + 1).port(transport == Nvm.Transport.TCP ? 0 : -1).conclude());
    }

    private static AsymNvm open(BackendNode node, Nvm.Transport transport, int id) {
        return transport == Nvm.Transport.TCP
                ? AsymNvm.connect("127.0.0.1", node.port(), id, FrontendOptions.defaults().withCredentials(node.credentialsFile()))
                : AsymNvm.open(node.localFabric(), id, FrontendOptions.defaults());
    }

    @ParameterizedTest
    @EnumSource(Nvm.Transport.class)
    void shouldLetExactlyOneOfConcurrentCreatorsHaveAName(Nvm.Transport transport) throws Exception {
        int[] winners = new int[ROUNDS];
        try (BackendNode node = start(transport)) {
            List<AsymNvm> frontends = new ArrayList<>();
            ExecutorService pool = Executors.newFixedThreadPool(FRONTENDS);
            try {
                for (int f = 1; f <= FRONTENDS; f++) {
                    frontends.add(open(node, transport, f));
                }
                for (int round = 0; round < ROUNDS; round++) {
                    String name = "shared-" + round;
                    CyclicBarrier start = new CyclicBarrier(FRONTENDS);
                    List<Future<Integer>> outcomes = new ArrayList<>();
                    for (AsymNvm nvm : frontends) {
                        outcomes.add(pool.submit(() -> {
                            start.await(30, TimeUnit.SECONDS);
                            LoaderImpl impl;
                            try {
                                impl = new LoaderImpl(nvm, name);
                            } catch (AsymNvmException refused) {
                                assertEquals(ErrorCode.NAME_TAKEN, refused.errorCode(), refused.getMessage());
                                assertTrue(refused.getMessage().contains("'" + name + "'"), refused.getMessage());
                                return 0;
                            }
                            Loader loader = nvm.transactional(Loader.class, impl);
                            for (long k = 0; k < KEYS; k++) {
                                loader.put(k, name + "@" + nvm.frontendId() + ":" + k);
                            }
                            return nvm.frontendId();
                        }));
                    }
                    List<Integer> won = new ArrayList<>();
                    for (Future<Integer> o : outcomes) {
                        int id = o.get(60, TimeUnit.SECONDS);
                        if (id != 0) {
                            won.add(id);
                        }
                    }
                    assertEquals(1, won.size(), "round " + round + ": frontends that loaded '" + name + "': " + won);
                    winners[round] = won.get(0);
                    // a proxy per name: the registry holds Loader once per frontend, so later rounds reopen them
                    for (AsymNvm nvm : frontends) {
                        nvm.close();
                    }
                    frontends.clear();
                    for (int f = 1; f <= FRONTENDS; f++) {
                        frontends.add(open(node, transport, f));
                    }
                }
            } finally {
                pool.shutdownNow();
                frontends.forEach(AsymNvm::close);
            }
        }
        // after a restart every acknowledged key is reachable by its owner, and the others are still refused
        try (BackendNode node = start(transport)) {
            for (int round = 0; round < ROUNDS; round++) {
                String name = "shared-" + round;
                int owner = winners[round];
                for (int f = 1; f <= FRONTENDS; f++) {
                    try (AsymNvm nvm = open(node, transport, f)) {
                        if (f != owner) {
                            AsymNvmException e = assertThrows(AsymNvmException.class, () -> new LoaderImpl(nvm, name));
                            assertTrue(e.getMessage().contains("belongs to frontend " + owner), e.getMessage());
                            continue;
                        }
                        Loader loader = nvm.transactional(Loader.class, new LoaderImpl(nvm, name));
                        for (long k = 0; k < KEYS; k++) {
                            assertEquals(name + "@" + owner + ":" + k, loader.get(k));
                        }
                    }
                }
            }
        }
    }

    /**
     * A claim whose frontend crashed before creating the name still holds it for that frontend: others are
     * refused ("is being created by"), the crashed frontend's next incarnation creates it.
     */
    @Test
    void shouldKeepAClaimForItsFrontendAcrossItsCrash() {
        try (BackendNode node = start(Nvm.Transport.LOCAL)) {
            AsymNvm first = open(node, Nvm.Transport.LOCAL, 1);
            new LoaderImpl(first, "claimed"); // claims, creates nothing
            first.crash();
            try (AsymNvm other = open(node, Nvm.Transport.LOCAL, 2)) {
                AsymNvmException e = assertThrows(AsymNvmException.class, () -> new LoaderImpl(other, "claimed"));
                assertEquals(ErrorCode.NAME_TAKEN, e.errorCode());
                assertTrue(e.getMessage().contains("is being created by frontend 1"), e.getMessage());
            }
            try (AsymNvm again = open(node, Nvm.Transport.LOCAL, 1)) {
                Loader loader = again.transactional(Loader.class, new LoaderImpl(again, "claimed"));
                loader.put(7, "seven");
                assertNotNull(loader.get(7));
            }
        }
    }
}
