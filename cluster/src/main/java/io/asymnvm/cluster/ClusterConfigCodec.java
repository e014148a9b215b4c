package io.asymnvm.cluster;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The JSON form of {@link ClusterConfig}, as stored in the configuration znode:
 *
 * <pre>
 * {"format":1, "epoch":7, "image":"3f0c…-uuid",
 *  "backend":{"id":"b0","host":"10.0.0.1","port":7000},
 *  "mirrors":[{"id":"m1","host":"10.0.0.2","port":7001,"mode":"SYNC","state":"IN_SYNC"}]}
 * </pre>
 *
 * Decoding walks the tree by hand so that every refusal names the field path and the value found; unknown fields
 * are refused too (a newer writer's record is not silently truncated by an older reader).
 */
final class ClusterConfigCodec {
    /** Format of the record; a reader refuses any other. */
    static final int FORMAT = 1;
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final List<String> TOP_FIELDS = List.of("format", "epoch", "image", "backend", "mirrors");
    private static final List<String> NODE_FIELDS = List.of("id", "host", "port");
    private static final List<String> MIRROR_FIELDS = List.of("id", "host", "port", "mode", "state");

    private ClusterConfigCodec() {
    }

    static byte[] encode(ClusterConfig config) {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("format", FORMAT);
        root.put("epoch", config.epoch());
        root.put("image", config.imageId().toString());
        root.set("backend", node(config.backend()));
        ArrayNode mirrors = root.putArray("mirrors");
        for (MirrorInfo m : config.mirrors()) {
            ObjectNode n = node(m.node());
            n.put("mode", m.mode().name());
            n.put("state", m.state().name());
            mirrors.add(n);
        }
        try {
            return MAPPER.writeValueAsBytes(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode " + config, e);
        }
    }

    private static ObjectNode node(NodeEndpoint e) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("id", e.id());
        n.put("host", e.host());
        n.put("port", e.port());
        return n;
    }

    static ClusterConfig decode(byte[] json) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw corrupt("not JSON (" + e.getOriginalMessage() + "): '" + preview(json) + "'");
        } catch (IOException e) {
            throw corrupt("not JSON (" + e.getMessage() + "): '" + preview(json) + "'");
        }
        if (root == null || !root.isObject()) {
            throw corrupt("not a JSON object: '" + preview(json) + "'");
        }
        requireKnownFields("", root, TOP_FIELDS);
        long format = longField("", root, "format");
        if (format != FORMAT) {
            throw new AsymNvmException(ErrorCode.FORMAT_VERSION_MISMATCH,
                    "cluster configuration format " + format + ", this reader knows format " + FORMAT);
        }
        long epoch = longField("", root, "epoch");
        if (epoch < 1) {
            throw corrupt("field 'epoch' must be positive: " + epoch);
        }
        String image = textField("", root, "image");
        UUID imageId;
        try {
            imageId = UUID.fromString(image);
        } catch (IllegalArgumentException e) {
            throw corrupt("field 'image' is not a UUID: '" + image + "'");
        }
        NodeEndpoint backend = endpoint("backend.", field("", root, "backend"), NODE_FIELDS);
        JsonNode mirrorsNode = field("", root, "mirrors");
        if (!mirrorsNode.isArray()) {
            throw corrupt("field 'mirrors' is not an array: " + mirrorsNode);
        }
        List<MirrorInfo> mirrors = new ArrayList<>();
        for (int i = 0; i < mirrorsNode.size(); i++) {
            String path = "mirrors[" + i + "].";
            JsonNode m = mirrorsNode.get(i);
            NodeEndpoint node = endpoint(path, m, MIRROR_FIELDS);
            ReplicationMode mode = enumField(path, m, "mode", ReplicationMode.class);
            MirrorState state = enumField(path, m, "state", MirrorState.class);
            mirrors.add(new MirrorInfo(node, mode, state));
        }
        try {
            return new ClusterConfig(epoch, imageId, backend, mirrors);
        } catch (IllegalArgumentException e) {
            throw corrupt("field " + e.getMessage());
        }
    }

    private static NodeEndpoint endpoint(String path, JsonNode n, List<String> known) {
        if (!n.isObject()) {
            throw corrupt("field '" + path.substring(0, path.length() - 1) + "' is not an object: " + n);
        }
        requireKnownFields(path, n, known);
        String id = textField(path, n, "id");
        String host = textField(path, n, "host");
        long port = longField(path, n, "port");
        try {
            return new NodeEndpoint(id, host, (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, port)));
        } catch (IllegalArgumentException e) {
            throw corrupt("field " + path + e.getMessage());
        }
    }

    private static void requireKnownFields(String path, JsonNode n, List<String> known) {
        n.fieldNames().forEachRemaining(f -> {
            if (!known.contains(f)) {
                throw corrupt("unknown field '" + path + f + "' (known: " + known + ")");
            }
        });
    }

    private static JsonNode field(String path, JsonNode n, String name) {
        JsonNode v = n.get(name);
        if (v == null || v.isNull()) {
            throw corrupt("field '" + path + name + "' is missing");
        }
        return v;
    }

    private static long longField(String path, JsonNode n, String name) {
        JsonNode v = field(path, n, name);
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw corrupt("field '" + path + name + "' is not an integer: " + v);
        }
        return v.longValue();
    }

    private static String textField(String path, JsonNode n, String name) {
        JsonNode v = field(path, n, name);
        if (!v.isTextual()) {
            throw corrupt("field '" + path + name + "' is not a string: " + v);
        }
        return v.textValue();
    }

    private static <E extends Enum<E>> E enumField(String path, JsonNode n, String name, Class<E> type) {
        String v = textField(path, n, name);
        try {
            return Enum.valueOf(type, v);
        } catch (IllegalArgumentException e) {
            List<String> allowed = new ArrayList<>();
            for (E c : type.getEnumConstants()) {
                allowed.add(c.name());
            }
            throw corrupt("field '" + path + name + "' must be one of " + allowed + ": '" + v + "'");
        }
    }

    private static String preview(byte[] json) {
        String s = new String(json, StandardCharsets.UTF_8);
        return s.length() <= 80 ? s : s.substring(0, 80) + "…";
    }

    private static AsymNvmException corrupt(String what) {
        return new AsymNvmException(ErrorCode.CORRUPT_RECORD, "cluster configuration: " + what);
    }
}
