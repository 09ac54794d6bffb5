package io.gossgpu.server;

import java.util.List;

/**
 * Finds stop sequences in streamed text. Text that might be the start of a stop sequence is held back until
 * it is known not to be, so a client never sees any part of the stop sequence.
 */
final class StopMatcher {
    private final List<String> stops;
    private final StringBuilder held = new StringBuilder();
    private boolean stopped;

    StopMatcher(List<String> stops) {
        this.stops = stops;
    }

    boolean stopped() {
        return stopped;
    }

    /** Adds {@code delta}; returns the text that is now safe to pass on ("" if none). */
    String accept(String delta) {
        if (stopped) return "";
        if (stops.isEmpty()) return delta;
        held.append(delta);
        int first = -1;
        for (String s : stops) {
            int i = held.indexOf(s);
            if (i >= 0 && (first < 0 || i < first)) first = i;
        }
        if (first >= 0) {
            stopped = true;
            String out = held.substring(0, first);
            held.setLength(0);
            return out;
        }
        int keep = 0;
        String h = held.toString();
        for (String s : stops)
            for (int k = Math.min(s.length() - 1, h.length()); k > keep; k--)
                if (h.regionMatches(h.length() - k, s, 0, k)) { keep = k; break; }
        String out = held.substring(0, held.length() - keep);
        held.delete(0, held.length() - keep);
        return out;
    }

    /** The output ended: whatever is held back was no stop sequence after all. */
    String flush() {
        if (stopped) return "";
        String out = held.toString();
        held.setLength(0);
        return out;
    }
}
