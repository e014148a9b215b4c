package io.asymnvm.core.fabric.tcp;

import java.util.Locale;

/**
 * Which thread of the emulated NIC runs a FLUSH (the msync). System property {@value #PROPERTY}: {@code inline}
 * (default), {@code lane} or {@code workers}; an unknown value is refused naming the choices.
 * <ul>
 *   <li>{@link #INLINE_WHEN_ALONE}: on the event loop when the connection is the only one on its loop (it can then
 *       delay only its own later requests, which wait for it anyway), else on the worker pool;</li>
 *   <li>{@link #LANE}: always on the loop's {@link PersistLane}, a dedicated thread that polls briefly for work
 *       before it parks;</li>
 *   <li>{@link #WORKERS}: always on the shared worker pool.</li>
 * </ul>
 */
enum FlushPlacement {
    INLINE_WHEN_ALONE, LANE, WORKERS;

    static final String PROPERTY = "asymnvm.nic.flush";

    static FlushPlacement fromProperty() {
        return parse(System.getProperty(PROPERTY, "inline"));
    }

    static FlushPlacement parse(String value) {
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "inline" -> INLINE_WHEN_ALONE;
            case "lane" -> LANE;
            case "workers" -> WORKERS;
            default -> throw new IllegalArgumentException("unknown " + PROPERTY + " '" + value
                    + "': expected inline, lane or workers");
        };
    }
}
