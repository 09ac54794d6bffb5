package io.gossgpu;

/**
 * The project's own error: its message is one line a user can act on (what failed, where, why).
 * Everything the engine throws for bad input, missing devices or exhausted memory is one of these;
 * the command line prints the message and exits non-zero, without a stack trace.
 */
public class GossException extends RuntimeException {
    public GossException(String message) {
        super(message);
    }

    public GossException(String message, Throwable cause) {
        super(message, cause);
    }
}
