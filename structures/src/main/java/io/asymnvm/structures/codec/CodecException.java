package io.asymnvm.structures.codec;

/** Bytes that a codec cannot decode (a structure read with the wrong codec, or damaged data). */
public final class CodecException extends IllegalArgumentException {
    public CodecException(String message) {
        super(message);
    }

    public CodecException(String message, Throwable cause) {
        super(message, cause);
    }
}
