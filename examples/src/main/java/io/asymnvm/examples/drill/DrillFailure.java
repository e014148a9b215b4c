package io.asymnvm.examples.drill;

/**
 * Something that stops a drill: a child that hangs past its deadline, exits or reports an error, or a protocol
 * line that makes no sense. Counted as a violation; the drill then ends (children killed, scratch removed).
 */
final class DrillFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    DrillFailure(String message) {
        super(message);
    }
}
