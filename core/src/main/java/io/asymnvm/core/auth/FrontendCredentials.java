package io.asymnvm.core.auth;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

/**
 * Per-frontend secrets, kept in a {@link Properties} file that only its owner may read (POSIX mode 0600):
 *
 * <pre>
 * version=1
 * frontend.0=&lt;32 random bytes, base64&gt;
 * frontend.1=...
 * replication=&lt;32 random bytes, base64&gt;   (optional: the secret a backend and its mirrors share)
 * </pre>
 *
 * A backend creates the file with a secret for each of its frontend ids the first time it serves over tcp
 * ({@link #createIfAbsent}); a client needs only its own line, so {@link #export} writes one frontend's secret to
 * a file of its own. Loading refuses, naming the file and the problem, a file that group or others may access, an
 * unknown key, a secret that is not 32 bytes of base64, or a file without any secret. Immutable once loaded.
 */
public final class FrontendCredentials {
    public static final int SECRET_LENGTH = 32;
    static final String VERSION_KEY = "version";
    static final String VERSION = "1";
    static final String FRONTEND_PREFIX = "frontend.";
    /** The key of the replication secret: a backend and its mirrors prove to each other that they hold it. */
    static final String REPLICATION_KEY = "replication";
    static final int MAX_FRONTEND_ID = 1 << 20;
    private static final Set<PosixFilePermission> OWNER_ONLY =
            EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
    private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY_ATTRIBUTE =
            PosixFilePermissions.asFileAttribute(OWNER_ONLY);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path file;
    private final Map<Integer, byte[]> secrets;
    private final byte[] replication;

    private FrontendCredentials(Path file, Map<Integer, byte[]> secrets, byte[] replication) {
        this.file = file;
        this.secrets = Collections.unmodifiableMap(secrets);
        this.replication = replication;
    }

    /** Whether the file holds the replication secret (files created before mirrors existed do not). */
    public boolean hasReplicationSecret() {
        return replication != null;
    }

    /**
     * A copy of the replication secret that a backend and its mirrors share (peer attach, adding a mirror,
     * promotion); refused naming the file when it holds none.
     */
    public byte[] replicationSecret() {
        if (replication == null) {
            throw new IllegalArgumentException("credentials file " + file + " holds no '" + REPLICATION_KEY
                    + "' secret: it was created before mirrors existed; add a line " + REPLICATION_KEY
                    + "=<32 random bytes, base64> to it (mode 0600) and give the same file to the backend and "
                    + "its mirrors");
        }
        return replication.clone();
    }

    /** The file these credentials were read from. */
    public Path file() {
        return file;
    }

    /** The frontend ids with a secret, ascending. */
    public Set<Integer> frontendIds() {
        return secrets.keySet();
    }

    /** A copy of {@code frontendId}'s secret; refused naming the file when it holds none. */
    public byte[] secret(int frontendId) {
        byte[] s = secrets.get(frontendId);
        if (s == null) {
            throw new IllegalArgumentException("credentials file " + file + " holds no secret for frontend "
                    + frontendId + " (it has " + secrets.keySet() + ")");
        }
        return s.clone();
    }

    public boolean hasSecret(int frontendId) {
        return secrets.containsKey(frontendId);
    }

    /**
     * Loads {@code file}, or creates it with a fresh random secret for every frontend id in [0, frontends) when
     * it does not exist. The file is created with mode 0600 (in a temporary file of that mode beside it, then
     * renamed into place, so no reader ever sees it partly written or with a wider mode).
     */
    public static FrontendCredentials createIfAbsent(Path file, int frontends) {
        if (frontends < 1 || frontends > MAX_FRONTEND_ID) {
            throw new IllegalArgumentException("frontends outside [1, " + MAX_FRONTEND_ID + "]: " + frontends);
        }
        if (Files.exists(file)) {
            return load(file);
        }
        Map<Integer, byte[]> secrets = new TreeMap<>();
        for (int id = 0; id < frontends; id++) {
            byte[] s = new byte[SECRET_LENGTH];
            RANDOM.nextBytes(s);
            secrets.put(id, s);
        }
        byte[] replication = new byte[SECRET_LENGTH];
        RANDOM.nextBytes(replication);
        write(file, secrets, replication,
                "AsymNVM frontend credentials: one secret per frontend id. Keep this file secret.");
        return new FrontendCredentials(file, secrets, replication);
    }

    /**
     * Writes {@code frontendId}'s secret alone to {@code out} (mode 0600), the file to hand to that frontend.
     * Refuses to overwrite an existing file.
     */
    public Path export(int frontendId, Path out) {
        if (Files.exists(out)) {
            throw new IllegalArgumentException("credentials file " + out + " exists; remove it or choose another");
        }
        Map<Integer, byte[]> one = new TreeMap<>();
        one.put(frontendId, secret(frontendId));
        write(out, one, null, "AsymNVM credential of frontend " + frontendId + ". Keep this file secret.");
        return out;
    }

    /** Reads and validates {@code file}; every problem is an {@link IllegalArgumentException} naming the file. */
    public static FrontendCredentials load(Path file) {
        checkOwnerOnly(file);
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(in);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("credentials file " + file + " does not exist");
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException("credentials file " + file + " cannot be read: " + e.getMessage(), e);
        }
        String version = p.getProperty(VERSION_KEY);
        if (!VERSION.equals(version)) {
            throw malformed(file, VERSION_KEY + " is " + (version == null ? "missing" : "'" + version + "'")
                    + ", expected " + VERSION);
        }
        Map<Integer, byte[]> secrets = new TreeMap<>();
        byte[] replication = null;
        for (String key : p.stringPropertyNames()) {
            if (key.equals(VERSION_KEY)) {
                continue;
            }
            int id = key.equals(REPLICATION_KEY) ? -1 : frontendIdOf(file, key);
            byte[] secret;
            try {
                secret = Base64.getDecoder().decode(p.getProperty(key).strip());
            } catch (IllegalArgumentException e) {
                throw malformed(file, key + " is not base64: " + e.getMessage());
            }
            if (secret.length != SECRET_LENGTH) {
                throw malformed(file, key + " holds " + secret.length + " bytes, expected " + SECRET_LENGTH);
            }
            if (id < 0) {
                replication = secret;
            } else {
                secrets.put(id, secret);
            }
        }
        if (secrets.isEmpty()) {
            throw malformed(file, "no " + FRONTEND_PREFIX + "N secret in it");
        }
        return new FrontendCredentials(file, secrets, replication);
    }

    private static int frontendIdOf(Path file, String key) {
        if (!key.startsWith(FRONTEND_PREFIX)) {
            throw malformed(file, "unknown key '" + key + "' (expected " + VERSION_KEY + ", "
                    + FRONTEND_PREFIX + "N and " + REPLICATION_KEY + ")");
        }
        try {
            int id = Integer.parseInt(key.substring(FRONTEND_PREFIX.length()));
            if (id >= 0 && id < MAX_FRONTEND_ID) {
                return id;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw malformed(file, "key '" + key + "' does not name a frontend id in [0, " + MAX_FRONTEND_ID + ")");
    }

    private static IllegalArgumentException malformed(Path file, String problem) {
        return new IllegalArgumentException("credentials file " + file + " is malformed: " + problem);
    }

    /** Refuses a file that group or others may read, write or execute (ssh's rule for private keys). */
    static void checkOwnerOnly(Path file) {
        Set<PosixFilePermission> mode;
        try {
            mode = Files.getPosixFilePermissions(file);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("credentials file " + file + " does not exist");
        } catch (UnsupportedOperationException | IOException e) {
            throw new IllegalArgumentException("credentials file " + file + ": cannot read its POSIX permissions ("
                    + e + "); it must be on a POSIX file system with mode 0600");
        }
        Set<PosixFilePermission> wider = EnumSet.copyOf(mode);
        wider.removeAll(EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
                PosixFilePermission.OWNER_EXECUTE));
        if (!wider.isEmpty()) {
            throw new IllegalArgumentException("credentials file " + file + " has mode "
                    + PosixFilePermissions.toString(mode) + ": group or others may access it ("
                    + wider + "); run chmod 600 on it");
        }
    }

    private static void write(Path file, Map<Integer, byte[]> secrets, byte[] replication, String comment) {
        Properties p = new Properties();
        p.setProperty(VERSION_KEY, VERSION);
        secrets.forEach((id, s) -> p.setProperty(FRONTEND_PREFIX + id, Base64.getEncoder().encodeToString(s)));
        if (replication != null) {
            p.setProperty(REPLICATION_KEY, Base64.getEncoder().encodeToString(replication));
        }
        Path absolute = file.toAbsolutePath();
        Path tmp = null;
        try {
            tmp = Files.createTempFile(absolute.getParent(), absolute.getFileName().toString(), ".tmp",
                    OWNER_ONLY_ATTRIBUTE);
            try (OutputStream out = Files.newOutputStream(tmp)) {
                p.store(out, comment);
            }
            try {
                Files.move(tmp, absolute, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, absolute);
            }
            tmp = null;
        } catch (FileAlreadyExistsException e) {
            throw new IllegalArgumentException("credentials file " + file + " exists", e);
        } catch (IOException | UnsupportedOperationException e) {
            throw new IllegalArgumentException("cannot create credentials file " + file + ": " + e, e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // best effort: the temporary file is mode 0600
                }
            }
        }
    }
}
