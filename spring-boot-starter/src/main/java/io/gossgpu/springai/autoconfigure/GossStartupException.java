package io.gossgpu.springai.autoconfigure;

/**
 * The goss-gpu engine or its chat defaults could not be made from the {@code goss.*} properties; the message is one
 * line that names the property. {@link GossFailureAnalyzer} reports it without a stack trace.
 */
public class GossStartupException extends RuntimeException {
    public GossStartupException(String message) {
        super(message);
    }

    public GossStartupException(String message, Throwable cause) {
        super(message, cause);
    }

    /** The first line of {@code t}'s message (or its class name when it has none). */
    static String firstLine(Throwable t) {
        String m = t.getMessage();
        if (m == null || m.isBlank()) return t.getClass().getSimpleName();
        int nl = m.indexOf('\n');
        return nl < 0 ? m.strip() : m.substring(0, nl).strip();
    }
}
