package io.asymnvm.frontend.tx;

/**
 * Thrown inside a superseded engine; {@link TransactionEngine#execute} and the public calls continue on the
 * successor.
 */
final class Superseded extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient TransactionEngine next;

    Superseded(TransactionEngine next) {
        super("engine superseded after a failover", null, false, false);
        this.next = next;
    }
}
