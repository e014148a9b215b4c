package io.asymnvm.cluster;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A node of the cluster: its stable id (also a ZooKeeper path segment, so restricted to {@code [A-Za-z0-9._-]}, 1 to
 * 64 characters) and the host and port its server listens on.
 */
public record NodeEndpoint(String id, String host, int port) {
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    /** Longest host name DNS allows. */
    static final int MAX_HOST_LENGTH = 253;

    public NodeEndpoint {
        requireNodeId("id", id);
        Objects.requireNonNull(host, "host");
        if (host.isBlank() || host.length() > MAX_HOST_LENGTH || host.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException("host must be 1 to " + MAX_HOST_LENGTH
                    + " characters without blanks: '" + host + "'");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port out of range [1, 65535]: " + port);
        }
    }

    /** Parses {@code id@host:port}. */
    public static NodeEndpoint parse(String text) {
        int at = text.indexOf('@');
        int colon = text.lastIndexOf(':');
        if (at <= 0 || colon < at + 2 || colon == text.length() - 1) {
            throw new IllegalArgumentException("node endpoint not of the form id@host:port: '" + text + "'");
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("port of node endpoint '" + text + "' is not a number");
        }
        return new NodeEndpoint(text.substring(0, at), text.substring(at + 1, colon), port);
    }

    /** Validates a node id (it names a lease node in ZooKeeper). */
    public static String requireNodeId(String field, String id) {
        if (id == null || !ID.matcher(id).matches()) {
            throw new IllegalArgumentException(field + " must match " + ID.pattern() + ": '" + id + "'");
        }
        return id;
    }

    /** {@code host:port}. */
    public String address() {
        return host + ":" + port;
    }

    @Override
    public String toString() {
        return id + "@" + address();
    }
}
