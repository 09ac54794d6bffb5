package io.gossgpu.constrain;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The quote-free token masks of one patterned string, precomputed when its schema becomes a matcher
 * ({@link ByteMatcher#json}), so that no token inside the string pays a walk of the vocabulary: per frame between
 * characters or after a backslash ({@link PatternFrames}), one mask per character count the length limits tell apart
 * ({@link StringPattern#lengthCap}; equal masks are shared). Per state, the tokens that begin with a continuation
 * byte, from which a frame one byte short of a whole character is put together. Other frames inside a character,
 * and any left out by the budget, are walked when first met ({@link TokenMasker}). Immutable once built.
 */
final class PatternMasks {
    private final Map<Long, long[][]> byFrame;
    private final int cap;
    private final boolean bounded;
    /** How many distinct masks are held (25 KB each over the o200k vocabulary). */
    final int distinct;
    /** Per state, per continuation byte's low bits: the tokens that start with it ({@code TokenMasker.continuationWalks}). */
    private final TokenMasker.PatternWalk[][] continuation;

    PatternMasks(Map<Long, long[][]> byFrame, StringPattern p, int distinct, TokenMasker.PatternWalk[][] continuation) {
        this.byFrame = Map.copyOf(byFrame);
        this.continuation = continuation;
        this.cap = p.lengthCap();
        this.bounded = p.maxLength != Integer.MAX_VALUE;
        this.distinct = distinct;
    }

    /** The quote-free tokens frame {@code f} takes after {@code count} characters, or null when not precomputed. */
    long[] get(long f, int count) {
        long[][] perCount = byFrame.get(f);
        if (perCount == null) return null;
        if (count > cap) {
            if (bounded) return null;
            count = cap;
        }
        return perCount[count];
    }

    /** The tokens that start with a continuation byte of low bits {@code x} ending a character that leads to {@code q}, or null. */
    TokenMasker.PatternWalk continuation(int q, int x) {
        TokenMasker.PatternWalk[] w = continuation[q];
        return w == null ? null : w[x];
    }

    /** How many frames have their masks here. */
    int frames() {
        return byFrame.size();
    }

    /** The patterns of the strings in {@code g}, each once. */
    static List<StringPattern> in(JsonGrammar g) {
        List<StringPattern> out = new ArrayList<>();
        collect(g, Collections.newSetFromMap(new IdentityHashMap<>()), out);
        return out;
    }

    private static void collect(JsonGrammar g, Set<Object> seen, List<StringPattern> out) {
        if (g == null || !seen.add(g)) return;
        switch (g) {
            case JsonGrammar.Ref r -> collect(r.target, seen, out);
            case JsonGrammar.ObjectNode o -> {
                for (JsonGrammar.Property p : o.properties()) collect(p.value(), seen, out);
                collect(o.extra(), seen, out);
            }
            case JsonGrammar.ArrayNode a -> collect(a.items(), seen, out);
            case JsonGrammar.AnyOf a -> {
                for (JsonGrammar alt : a.alternatives()) collect(alt, seen, out);
            }
            case JsonGrammar.StringNode s -> {
                if (s.pattern() != null && seen.add(s.pattern())) out.add(s.pattern());
            }
            case JsonGrammar.AnyValue v -> {}
            case JsonGrammar.NumberNode n -> {}
            case JsonGrammar.Literals l -> {}
        }
    }
}
