package io.asymnvm.core.fabric;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

/**
 * Selects a {@link FabricProvider} by name. An unavailable fabric (an {@code rdma} whose probe failed: no libdisni
 * on {@code java.library.path}, no device, or the module missing from the class path) falls back to {@code tcp}
 * with one WARN naming the reason, unless the selection is strict, which throws
 * {@link FabricUnavailableException} instead. An unknown name is a bad value ({@link IllegalArgumentException}
 * listing the known names). Thread-safe.
 */
public final class FabricProviders {
    private static final Logger LOG = LoggerFactory.getLogger(FabricProviders.class);
    /** What an unavailable fabric falls back to. */
    public static final String FALLBACK = "tcp";
    /** The fabric names this project defines, whether or not their module is on the class path. */
    public static final List<String> KNOWN = List.of("local", "tcp", "rdma");

    private FabricProviders() {
    }

    /** The outcome of a selection: the provider to use and, if it is not the one requested, why. */
    public record Selection(String requested, FabricProvider provider, String fallbackReason) {
        public boolean fellBack() {
            return fallbackReason != null;
        }
    }

    /** Every provider on the class path, in service-file order. */
    public static List<FabricProvider> all() {
        List<FabricProvider> out = new ArrayList<>();
        ServiceLoader.load(FabricProvider.class, FabricProviders.class.getClassLoader()).forEach(out::add);
        return out;
    }

    /** The provider named {@code name}, or null if none is on the class path. */
    public static FabricProvider find(String name) {
        for (FabricProvider p : all()) {
            if (p.name().equals(name)) {
                return p;
            }
        }
        return null;
    }

    /** Selects {@code name}; falls back to {@code tcp} (WARN) when it is unavailable, unless {@code strict}. */
    public static Selection select(String name, boolean strict) {
        Objects.requireNonNull(name, "fabric name");
        String wanted = name.trim().toLowerCase(java.util.Locale.ROOT);
        if (!KNOWN.contains(wanted)) {
            throw new IllegalArgumentException("unknown fabric '" + name + "': expected one of "
                    + String.join(", ", KNOWN));
        }
        FabricProvider p = find(wanted);
        String reason;
        if (p == null) {
            reason = "no provider on the class path (add the asymnvm-" + wanted + " module); found: "
                    + all().stream().map(FabricProvider::name).collect(Collectors.joining(", "));
        } else {
            FabricProvider.Availability a = p.availability();
            if (a.available()) {
                return new Selection(wanted, p, null);
            }
            reason = a.reason();
        }
        if (strict || wanted.equals(FALLBACK)) {
            throw new FabricUnavailableException(wanted, reason);
        }
        FabricProvider fallback = find(FALLBACK);
        if (fallback == null) {
            throw new FabricUnavailableException(wanted, reason + "; and no '" + FALLBACK + "' provider to fall back to");
        }
        LOG.warn("fabric '{}' is unavailable, falling back to '{}': {}", wanted, FALLBACK, reason);
        return new Selection(wanted, fallback, reason);
    }

    /** Selects {@code name} (see {@link #select}) and starts its responder for {@code nic} on {@code bind}. */
    public static FabricProvider.Responder serve(String name, boolean strict, EmulatedNic nic,
                                                 java.net.InetSocketAddress bind) {
        return select(name, strict).provider().serve(nic, bind);
    }

    /** Selects {@code name} (see {@link #select}) and opens a fabric to {@code host:port}. */
    public static Fabric open(String name, boolean strict, String host, int port, Map<String, String> options) {
        return select(name, strict).provider().open(host, port, options);
    }
}
