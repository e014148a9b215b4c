package io.asymnvm.bench;

import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.kv.KeyValueStore;
import io.asymnvm.examples.kv.KeyValueStoreImpl;
import io.asymnvm.examples.kv.StructureKind;
import io.asymnvm.examples.mapbench.MapBenchConfig;
import io.asymnvm.examples.support.BenchRig;
import io.asymnvm.frontend.AsymNvm;

/**
 * The fixture the JMH map benchmarks share: an embedded ({@code local}) rig sized as {@code ./asymnvm bench map}
 * sizes it, a persistent structure behind the transactional proxy of a {@link KeyValueStore}, and {@code keys.length}
 * keys {@code "user" + i} loaded in batches of {@value #LOAD_BATCH} with values of {@code valueBytes} characters.
 */
final class LoadedStore implements AutoCloseable {
    static final int LOAD_BATCH = 100;

    final String[] keys;
    final BenchRig rig;
    final KeyValueStore store;

    private LoadedStore(String[] keys, BenchRig rig, KeyValueStore store) {
        this.keys = keys;
        this.rig = rig;
        this.store = store;
    }

    /** Starts the rig and loads key {@code i} with {@code values[i]} (every value {@code valueBytes} characters). */
    static LoadedStore load(StructureKind kind, String name, String[] values, int valueBytes) {
        String[] keys = new String[values.length];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = "user" + i;
        }
        BenchRig rig = BenchRig.start(FabricKind.LOCAL, MapBenchConfig.defaultPmBytes(keys.length, valueBytes),
                MapBenchConfig.defaultCacheBytes(keys.length, valueBytes), "asymnvm-" + name + "-");
        AsymNvm nvm = rig.nvm();
        KeyValueStore store = nvm.transactional(KeyValueStore.class, new KeyValueStoreImpl(nvm, kind, name));
        for (int from = 0; from < keys.length; from += LOAD_BATCH) {
            int n = Math.min(LOAD_BATCH, keys.length - from);
            String[] k = new String[n];
            String[] v = new String[n];
            System.arraycopy(keys, from, k, 0, n);
            System.arraycopy(values, from, v, 0, n);
            store.putAll(k, v);
        }
        return new LoadedStore(keys, rig, store);
    }

    /** {@code prefix} padded with letters to {@code length} characters. */
    static String padded(String prefix, int length) {
        StringBuilder b = new StringBuilder(length).append(prefix);
        while (b.length() < length) {
            b.append((char) ('a' + b.length() % 26));
        }
        return b.toString();
    }

    AsymNvm nvm() {
        return rig.nvm();
    }

    @Override
    public void close() {
        rig.close();
    }
}
