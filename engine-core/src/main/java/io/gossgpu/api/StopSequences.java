package io.gossgpu.api;

import java.util.List;

/**
 * A caller's stop sequences over an answer as it streams (OpenAI's {@code stop}, LangChain4j's and Spring AI's stop
 * sequences). Text is passed on only once no stop sequence can begin in it: a tail that may be the start of one is held
 * back. At the first stop sequence the answer ends before it ({@link #stopped()}; the caller then cancels the reply).
 * Harmony's own stop tokens end a reply anyway; these are the caller's strings, which the model's tokens may spell in
 * pieces. One instance per answer; not thread-safe.
 */
public final class StopSequences {
    private final List<String> stops;
    private final StringBuilder text = new StringBuilder();
    private int sent;
    private boolean stopped;

    /** {@code stops} may be null or hold null or empty strings: those stop nothing. */
    public StopSequences(List<String> stops) {
        this.stops = stops == null
                ? List.of()
                : stops.stream().filter(s -> s != null && !s.isEmpty()).toList();
    }

    /** Adds {@code delta}; returns the part that may be passed on now (possibly empty; always empty once stopped). */
    public String accept(String delta) {
        if (stopped) return "";
        text.append(delta);
        int end = -1;
        for (String s : stops) {
            int i = text.indexOf(s, Math.max(0, sent - s.length() + 1));
            if (i >= 0 && (end < 0 || i < end)) end = i;
        }
        if (end >= 0) {
            stopped = true;
            text.setLength(Math.max(end, sent)); // never take back what was passed on
            return take(text.length());
        }
        return take(text.length() - heldBack());
    }

    /** The answer ended: what was held back, which no stop sequence followed ("" after a stop). */
    public String flush() {
        return take(text.length());
    }

    /** Whether a stop sequence was seen. */
    public boolean stopped() {
        return stopped;
    }

    /** The answer so far, up to (not including) the stop sequence when one was seen. */
    public String text() {
        return text.toString();
    }

    /** A whole answer cut at its first stop sequence (this instance's {@link #accept} then {@link #flush}). */
    public String cut(String whole) {
        return accept(whole) + flush();
    }

    /** The longest tail of the text not yet passed on that is the start of a stop sequence. */
    private int heldBack() {
        int best = 0;
        for (String s : stops)
            for (int n = Math.min(s.length() - 1, text.length() - sent); n > best; n--)
                if (s.startsWith(text.substring(text.length() - n))) {
                    best = n;
                    break;
                }
        return best;
    }

    private String take(int end) {
        String out = text.substring(sent, end);
        sent = end;
        return out;
    }
}
