package io.gossgpu.langchain4j;

import java.util.List;

/**
 * A request's stop sequences over the answer as it streams: text is passed on only once no stop sequence can begin
 * in it (a tail that may be the start of one is held back), and at the first stop sequence the answer ends before it
 * ({@link #stopped()}; the caller then cancels the reply).
 */
final class StopText {
    private final List<String> stops;
    private final StringBuilder text = new StringBuilder();
    private int sent;
    private boolean stopped;

    StopText(List<String> stops) {
        this.stops = stops == null ? List.of() : stops.stream().filter(s -> s != null && !s.isEmpty()).toList();
    }

    /** Adds {@code delta}; returns the part that may be passed on now (possibly empty). */
    String accept(String delta) {
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

    /** The rest, once the answer has ended without a stop sequence. */
    String finish() {
        return take(text.length());
    }

    boolean stopped() {
        return stopped;
    }

    /** The answer up to (not including) the stop sequence, or all of it. */
    String text() {
        return text.toString();
    }

    /** The longest tail of the text that is the start of a stop sequence. */
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
