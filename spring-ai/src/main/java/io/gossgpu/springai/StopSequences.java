package io.gossgpu.springai;

import java.util.List;

/**
 * Cuts a streamed answer at the first of the request's stop sequences: text is passed on as soon as it can no longer
 * be the start of one (the rest is held back), and nothing after a match. Harmony's own stop tokens end the reply
 * anyway; these are the caller's strings, which the model's tokens may spell in pieces.
 */
final class StopSequences {
    private final List<String> stops;
    private final StringBuilder held = new StringBuilder();
    private boolean matched;

    StopSequences(List<String> stops) {
        this.stops = stops.stream().filter(s -> s != null && !s.isEmpty()).toList();
    }

    /** The text of {@code delta} that can be passed on now ("" when all is held back or a stop sequence was seen). */
    String accept(String delta) {
        if (matched) return "";
        held.append(delta);
        int cut = -1;
        for (String s : stops) {
            int i = held.indexOf(s);
            if (i >= 0 && (cut < 0 || i < cut)) cut = i;
        }
        if (cut >= 0) {
            matched = true;
            String out = held.substring(0, cut);
            held.setLength(0);
            return out;
        }
        String h = held.toString();
        int keep = 0; // the longest end of the held text that some stop sequence starts with
        for (String s : stops)
            for (int k = Math.min(s.length() - 1, h.length()); k > keep; k--)
                if (h.regionMatches(h.length() - k, s, 0, k)) { keep = k; break; }
        String out = held.substring(0, held.length() - keep);
        held.delete(0, held.length() - keep);
        return out;
    }

    /** The text held back at the end of the reply (no stop sequence followed it). */
    String flush() {
        String out = matched ? "" : held.toString();
        held.setLength(0);
        return out;
    }

    boolean matched() {
        return matched;
    }

    /** {@code text} cut at the first stop sequence. */
    String cut(String text) {
        return accept(text) + flush();
    }
}
