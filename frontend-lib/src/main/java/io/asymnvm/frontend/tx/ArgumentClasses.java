package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The classes a frontend's semantic-record arguments may name: its allow-list. A semantic record is read back
 * from the backend's PM (by this frontend's next incarnation), so its bytes are not trusted: decoding resolves a
 * class name only through this list, by name, and never loads or initializes a class that is not on it.
 * Encoding is refused for the same classes, so a developer learns at the call, not at recovery.
 *
 * <p>What is allowed:
 * <ul>
 *   <li>the {@linkplain #DEFAULTS default set}: primitives and their boxes, {@code String}, {@code Object},
 *       {@code BigInteger}, {@code BigDecimal}, {@code Instant}, {@code Duration}, {@code LocalDate},
 *       {@code LocalDateTime};</li>
 *   <li>arrays whose component type is allowed ({@code byte[]}, {@code long[]}, {@code String[]},
 *       {@code Object[]}, {@code Transfer[]} once {@code Transfer} is allowed, ...);</li>
 *   <li>the declared parameter types of every registered {@code @PersistentTransaction} method (enums and
 *       records passed as parameters are therefore allowed by registering their interface);</li>
 *   <li>classes the application allows explicitly ({@code AsymNvm.allowArgumentClasses(...)}).</li>
 * </ul>
 * Everything else is refused with {@link ErrorCode#CLASS_NOT_REGISTERED} naming the class, notably the runtime
 * classes of fields and elements: an argument record holding a {@code List} needs the list's class
 * ({@code java.util.ArrayList}, say) allowed too. Collections are not in the default set on purpose.
 *
 * <p>Identities are class names, never Kryo's order-assigned registration ids, so a record written before a crash
 * decodes in a new JVM that allowed the same classes in any order. The list only grows. Thread-safe.
 */
public final class ArgumentClasses {
    /** The default set, allowed on every frontend. */
    public static final List<Class<?>> DEFAULTS = List.of(
            boolean.class, byte.class, short.class, char.class, int.class, long.class, float.class, double.class,
            Boolean.class, Byte.class, Short.class, Character.class, Integer.class, Long.class, Float.class,
            Double.class, String.class, Object.class, BigInteger.class, BigDecimal.class, Instant.class,
            Duration.class, LocalDate.class, LocalDateTime.class);

    private final Map<String, Class<?>> byName = new ConcurrentHashMap<>();
    private final int frontendId;

    /** An allow-list holding the default set, for frontend {@code frontendId} (named in refusals). */
    public ArgumentClasses(int frontendId) {
        this.frontendId = frontendId;
        DEFAULTS.forEach(this::allow);
    }

    /** Allows {@code type} (an array type allows its component types too). */
    public void allow(Class<?> type) {
        Objects.requireNonNull(type, "type");
        Class<?> t = type;
        while (t.isArray()) {
            t = t.getComponentType();
        }
        if (java.lang.reflect.Proxy.isProxyClass(t) || t.isHidden()) {
            throw new IllegalArgumentException("class " + t.getName() + " cannot be an argument class: a proxy or "
                    + "hidden class (a lambda) has no stable name to decode in recovery");
        }
        byName.putIfAbsent(t.getName(), t);
    }

    /** Whether {@code type} is allowed. */
    public boolean isAllowed(Class<?> type) {
        Class<?> t = type;
        while (t.isArray()) {
            t = t.getComponentType();
        }
        return byName.get(t.getName()) == t;
    }

    /**
     * The allowed class named {@code name} (a {@link Class#getName()}, arrays included); refuses any other name
     * before anything is loaded.
     */
    public Class<?> resolve(String name) {
        int dims = 0;
        while (dims < name.length() && name.charAt(dims) == '[') {
            dims++;
        }
        Class<?> component;
        if (dims == 0) {
            component = byName.get(name);
        } else if (name.length() > dims + 2 && name.charAt(dims) == 'L' && name.endsWith(";")) {
            component = byName.get(name.substring(dims + 1, name.length() - 1));
        } else {
            component = name.length() == dims + 1 ? primitive(name.charAt(dims)) : null;
        }
        if (component == null) {
            throw refusal(name);
        }
        Class<?> type = component;
        for (int i = 0; i < dims; i++) {
            type = type.arrayType();
        }
        return type;
    }

    /** The refusal for a class named {@code name}, telling how to allow it. */
    public AsymNvmException refusal(String name) {
        String simple = name.substring(Math.max(name.lastIndexOf('.'), name.lastIndexOf('$')) + 1);
        return new AsymNvmException(ErrorCode.CLASS_NOT_REGISTERED, "class " + name + " is not registered for "
                + "semantic-record arguments of frontend " + frontendId + "; allow it with allowArgumentClasses("
                + simple + ".class) on the AsymNvm before the first call and before recovery (parameter types of "
                + "registered @PersistentTransaction methods and the default set are allowed already)");
    }

    private static Class<?> primitive(char code) {
        return switch (code) {
            case 'Z' -> boolean.class;
            case 'B' -> byte.class;
            case 'S' -> short.class;
            case 'C' -> char.class;
            case 'I' -> int.class;
            case 'J' -> long.class;
            case 'F' -> float.class;
            case 'D' -> double.class;
            default -> null;
        };
    }
}
