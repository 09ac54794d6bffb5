package io.gossgpu;

import java.util.Locale;

/** How much the model reasons before it answers (the {@code Reasoning:} line of gpt-oss's system message). */
public enum ReasoningEffort {
    LOW,
    MEDIUM,
    HIGH;

    /** {@code low}, {@code medium} or {@code high}, as OpenAI's {@code reasoning_effort} writes it. */
    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses low / medium / high (any case). */
    public static ReasoningEffort parse(String s) {
        try {
            return valueOf(s.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException("reasoning effort must be low, medium or high, got '" + s + "'");
        }
    }
}
