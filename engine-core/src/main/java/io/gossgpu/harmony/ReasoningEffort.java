package io.gossgpu.harmony;

import java.util.Locale;

/** The {@code Reasoning:} level of the system message. */
public enum ReasoningEffort {
    LOW, MEDIUM, HIGH;

    public String wire() { return name().toLowerCase(Locale.ROOT); }

    /** Parses low / medium / high (any case). */
    public static ReasoningEffort parse(String s) {
        try {
            return valueOf(s.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("reasoning effort must be low, medium or high, got '" + s + "'");
        }
    }
}
