package io.asymnvm.core;

/**
 * A media or protocol fault with a stable {@link ErrorCode}. Thrown for corrupt records, rejected
 * remote operations and lost connections; configuration mistakes use {@link IllegalArgumentException}.
 */
public class AsymNvmException extends RuntimeException {
    private final ErrorCode errorCode;
    private final String detail;

    public AsymNvmException(ErrorCode errorCode, String message) {
        super("[" + errorCode + "/" + errorCode.code() + "] " + message);
        this.errorCode = errorCode;
        this.detail = message;
    }

    public AsymNvmException(ErrorCode errorCode, String message, Throwable cause) {
        super("[" + errorCode + "/" + errorCode.code() + "] " + message, cause);
        this.errorCode = errorCode;
        this.detail = message;
    }

    /** The message without the code prefix. */
    public String detail() {
        return detail;
    }

    public ErrorCode errorCode() {
        return errorCode;
    }
}
