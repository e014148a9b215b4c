package io.asymnvm.rdma;

import java.util.Map;
import java.util.Set;

/**
 * Options of the rdma fabric, validated completely before any DiSNI resource is created.
 *
 * @param depth              two-sided messages a connection may have outstanding (the responder posts as many
 *                           receives per session, so a requester's depth must not exceed its responder's);
 *                           option {@code depth}, 1..256, default 16
 * @param stagingSlots       registered staging buffers per connection for one-sided READ/WRITE data; option
 *                           {@code staging-slots}, 1..1024, default 32
 * @param slotBytes          bytes per staging buffer (a READ or WRITE larger than this is split); option
 *                           {@code slot-bytes}, 4 KiB..16 MiB, default 256 KiB
 * @param connectTimeoutMillis address/route resolution and connect timeout; option {@code connect-timeout-ms},
 *                           1..60000, default 2000
 */
public record RdmaOptions(int depth, int stagingSlots, int slotBytes, int connectTimeoutMillis) {
    /** Most staging memory one connection registers. */
    public static final long MAX_STAGING = 1L << 30;
    public static final Set<String> KEYS = Set.of("depth", "staging-slots", "slot-bytes", "connect-timeout-ms");

    public RdmaOptions {
        require("depth", depth, 1, 256);
        require("staging-slots", stagingSlots, 1, 1024);
        require("slot-bytes", slotBytes, 4096, 16 << 20);
        require("connect-timeout-ms", connectTimeoutMillis, 1, 60_000);
        if ((long) stagingSlots * slotBytes > MAX_STAGING) {
            throw new IllegalArgumentException("rdma staging of staging-slots " + stagingSlots + " x slot-bytes "
                    + slotBytes + " exceeds " + MAX_STAGING + " bytes per connection");
        }
    }

    public static RdmaOptions defaults() {
        return new RdmaOptions(16, 32, 256 * 1024, 2_000);
    }

    /** Largest single READ or WRITE: what the staging buffers hold at once. */
    public long maxTransfer() {
        return (long) stagingSlots * slotBytes;
    }

    /** Parses provider options; an unknown key or a bad value is refused naming it and its limits. */
    public static RdmaOptions parse(Map<String, String> options) {
        for (String k : options.keySet()) {
            if (!KEYS.contains(k)) {
                throw new IllegalArgumentException("unknown option of the rdma fabric: " + k + " (known: "
                        + String.join(", ", new java.util.TreeSet<>(KEYS)) + ")");
            }
        }
        RdmaOptions d = defaults();
        return new RdmaOptions(intOption(options, "depth", d.depth()),
                intOption(options, "staging-slots", d.stagingSlots()),
                intOption(options, "slot-bytes", d.slotBytes()),
                intOption(options, "connect-timeout-ms", d.connectTimeoutMillis()));
    }

    private static int intOption(Map<String, String> options, String key, int fallback) {
        String v = options.get(key);
        if (v == null) {
            return fallback;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("rdma option " + key + " is not an integer: " + v);
        }
    }

    private static void require(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException("rdma option " + name + " outside [" + min + ", " + max + "]: " + value);
        }
    }
}
