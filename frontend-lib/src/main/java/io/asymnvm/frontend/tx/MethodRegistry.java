package io.asymnvm.frontend.tx;

import io.asymnvm.frontend.Durability;
import io.asymnvm.frontend.PersistentTransaction;

import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Method identities for semantic records (DESIGN §6): a 64-bit hash of the stable signature
 * {@code interface#method(parameter types)}, followed by {@code @instance} when the interface is registered under
 * an instance name, so that no dictionary has to survive a crash. One interface can back several stores, each
 * registered under its own instance name (its records name the instance, and recovery re-executes each on the
 * implementation registered under that name). Registering two different methods with the same hash is refused.
 * Registering a method allows its declared parameter types as argument classes ({@link ArgumentClasses}).
 * Thread-safe.
 */
public final class MethodRegistry {

    /**
     * A registered transactional method and the object it runs on. {@code readOnly} and {@code durability} are
     * {@code spec}'s, read once at registration: an annotation's attributes are read through a reflective proxy,
     * which every call would otherwise pay (issue 8).
     */
    public record Entry(long hash, String signature, Method method, Object target, PersistentTransaction spec,
                        boolean readOnly, Durability durability) {
        public Entry(long hash, String signature, Method method, Object target, PersistentTransaction spec) {
            this(hash, signature, method, target, spec, spec.readOnly(), spec.durability());
        }
    }

    private final Map<Long, Entry> byHash = new ConcurrentHashMap<>();
    private final ArgumentClasses argumentClasses;

    /** A registry for frontend {@code frontendId}, whose argument allow-list starts with the default set. */
    public MethodRegistry(int frontendId) {
        this.argumentClasses = new ArgumentClasses(frontendId);
    }

    /**
     * The classes semantic-record arguments may name: the default set, the declared parameter types of every
     * registered method, and what the application allowed explicitly.
     */
    public ArgumentClasses argumentClasses() {
        return argumentClasses;
    }

    /** Longest instance name. */
    public static final int MAX_INSTANCE_LENGTH = 128;

    public static String signature(Class<?> iface, Method m) {
        return iface.getName() + "#" + m.getName() + "(" + Arrays.stream(m.getParameterTypes())
                .map(Class::getTypeName).collect(Collectors.joining(",")) + ")";
    }

    /** The signature of {@code m} registered under {@code instance} ("" for the interface's default instance). */
    public static String signature(Class<?> iface, Method m, String instance) {
        return instance.isEmpty() ? signature(iface, m) : signature(iface, m) + "@" + instance;
    }

    public static long hash(String signature) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(signature.getBytes(StandardCharsets.UTF_8));
            return ByteBuffer.wrap(d).order(ByteOrder.LITTLE_ENDIAN).getLong();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }

    /** Registers every {@link PersistentTransaction} method of {@code iface}; returns them by method. */
    public <T> Map<Method, Entry> register(Class<T> iface, T target) {
        return register(iface, target, "");
    }

    /**
     * Registers every {@link PersistentTransaction} method of {@code iface} under {@code instance} ("" is the
     * default instance, whose signatures carry no suffix); returns them by method.
     */
    public synchronized <T> Map<Method, Entry> register(Class<T> iface, T target, String instance) {
        if (instance == null || instance.length() > MAX_INSTANCE_LENGTH || instance.isBlank() != instance.isEmpty()) {
            throw new IllegalArgumentException("instance name " + (instance == null ? "null" : "'" + instance + "'")
                    + " must be empty (the default instance) or non-blank and at most " + MAX_INSTANCE_LENGTH
                    + " characters");
        }
        Map<Method, Entry> added = new java.util.HashMap<>();
        for (Method m : iface.getMethods()) {
            PersistentTransaction spec = m.getAnnotation(PersistentTransaction.class);
            if (spec == null) {
                continue;
            }
            String sig = signature(iface, m, instance);
            long h = hash(sig);
            Entry existing = byHash.get(h);
            if (existing != null) {
                throw new IllegalArgumentException(existing.signature().equals(sig)
                        ? "transactional method already registered: " + sig + " (on " + existing.target().getClass()
                        .getName() + "); to run several implementations behind one interface, register each under "
                        + "its own instance name: transactional(" + iface.getSimpleName() + ".class, impl, \"name\")"
                        : "method hash collision: " + sig + " and " + existing.signature());
            }
            m.setAccessible(true);
            for (Class<?> parameter : m.getParameterTypes()) {
                argumentClasses.allow(parameter);
            }
            Entry e = new Entry(h, sig, m, target, spec);
            byHash.put(h, e);
            added.put(m, e);
        }
        if (added.isEmpty()) {
            throw new IllegalArgumentException("interface " + iface.getName()
                    + " declares no @PersistentTransaction method");
        }
        return added;
    }

    /** Signatures of every registered method, for error messages. */
    public java.util.List<String> signatures() {
        return byHash.values().stream().map(Entry::signature).sorted().toList();
    }

    public Entry lookup(long hash) {
        return byHash.get(hash);
    }
}
