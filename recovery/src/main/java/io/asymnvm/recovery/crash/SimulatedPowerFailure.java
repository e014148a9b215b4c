package io.asymnvm.recovery.crash;

/**
 * Thrown by a {@link SimulatedPmRegion} at the persist call chosen with {@link SimulatedPmRegion#failAtPersist}
 * and by every store or persist after it: the machine lost power, nothing more reaches the media. An
 * {@link Error} so that no {@code catch (RuntimeException)} in the code under test swallows it and carries on.
 */
public final class SimulatedPowerFailure extends Error {
    private final long persistPoint;

    public SimulatedPowerFailure(String message, long persistPoint) {
        super(message);
        this.persistPoint = persistPoint;
    }

    /** Number of persist calls that completed before power was lost. */
    public long persistPoint() {
        return persistPoint;
    }

    /** The power failure in {@code t} or its causes (and suppressed exceptions), or null. */
    public static SimulatedPowerFailure findIn(Throwable t) {
        java.util.Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        java.util.ArrayDeque<Throwable> todo = new java.util.ArrayDeque<>();
        if (t != null) {
            todo.add(t);
        }
        while (!todo.isEmpty()) {
            Throwable c = todo.poll();
            if (!seen.add(c)) {
                continue;
            }
            if (c instanceof SimulatedPowerFailure f) {
                return f;
            }
            if (c.getCause() != null) {
                todo.add(c.getCause());
            }
            todo.addAll(java.util.Arrays.asList(c.getSuppressed()));
        }
        return null;
    }
}
