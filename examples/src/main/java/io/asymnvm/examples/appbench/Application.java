package io.asymnvm.examples.appbench;

import io.asymnvm.frontend.AsymNvm;

import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/** An application the harness runs ({@link AppBenchRun}): its names and size, its population, mix and checks. */
public interface Application {

    /** The application's name, the report's {@code app}. */
    String name();

    /** What the population counts ({@code subscribers}, {@code accounts}): the option and the JSON key. */
    String scaleName();

    /** Bytes of PM and of page cache one unit of the population takes, roughly (sizes the rig). */
    long bytesPerUnit();

    /** Registers the application's interfaces on {@code nvm} and populates {@code scale} units from {@code seed}. */
    Loaded load(AsymNvm nvm, long scale, long seed);

    /** A populated application. */
    interface Loaded {
        /** The mix the threads run (one object for warm-up and measurement). */
        TransactionMix mix();

        /** The application's checks after the run, in report order (JSON numbers and booleans). */
        Map<String, Object> checks();

        /** A populated application running {@code mix}, its checks computed by {@code checks} after the run. */
        static Loaded of(TransactionMix mix, Supplier<Map<String, Object>> checks) {
            Objects.requireNonNull(mix, "mix");
            Objects.requireNonNull(checks, "checks");
            return new Loaded() {
                @Override
                public TransactionMix mix() {
                    return mix;
                }

                @Override
                public Map<String, Object> checks() {
                    return checks.get();
                }
            };
        }
    }
}
