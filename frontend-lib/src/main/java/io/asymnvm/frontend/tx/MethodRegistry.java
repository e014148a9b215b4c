package io.asymnvm.frontend.tx;

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
 * {@code interface#method(parameter types)}, so that no dictionary has to survive a crash. Registering two
 * different methods with the same hash is refused. Thread-safe.
 */
public final class MethodRegistry {

    /** A registered transactional method and the object it runs on. */
    public record Entry(long hash, String signature, Method method, Object target, PersistentTransaction spec) {
    }

    private final Map<Long, Entry> byHash = new ConcurrentHashMap<>();

    public static String signature(Class<?> iface, Method m) {
        return iface.getName() + "#" + m.getName() + "(" + Arrays.stream(m.getParameterTypes())
                .map(Class::getTypeName).collect(Collectors.joining(",")) + ")";
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
    public synchronized <T> Map<Method, Entry> register(Class<T> iface, T target) {
        Map<Method, Entry> added = new java.util.HashMap<>();
        for (Method m : iface.getMethods()) {
            PersistentTransaction spec = m.getAnnotation(PersistentTransaction.class);
            if (spec == null) {
                continue;
            }
            String sig = signature(iface, m);
            long h = hash(sig);
            Entry existing = byHash.get(h);
            if (existing != null) {
                throw new IllegalArgumentException(existing.signature().equals(sig)
                        ? "transactional method already registered: " + sig
                        : "method hash collision: " + sig + " and " + existing.signature());
            }
            m.setAccessible(true);
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
