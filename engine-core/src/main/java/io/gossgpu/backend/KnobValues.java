package io.gossgpu.backend;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The values a {@link Knob} accepts: a range (every integer, multiples of a step, or powers of two) or an
 * explicit list. A device may lower the upper end ({@code limit}); the sentences this builds go into the
 * knob's error message ("must be a multiple of 32 from 32 to 1024").
 */
public record KnobValues(int min, int max, int multipleOf, boolean powerOfTwo, List<Integer> oneOf) {
    public KnobValues {
        oneOf = oneOf == null ? null : List.copyOf(oneOf);
    }

    /** Every integer in {@code min..max} ({@code Integer.MAX_VALUE}: no upper end). */
    public static KnobValues range(int min, int max) {
        return new KnobValues(min, max, 1, false, null);
    }

    /** Multiples of {@code step} in {@code min..max}. */
    public static KnobValues multipleOf(int step, int min, int max) {
        return new KnobValues(min, max, step, false, null);
    }

    /** Powers of two in {@code min..max}. */
    public static KnobValues powerOfTwo(int min, int max) {
        return new KnobValues(min, max, 1, true, null);
    }

    /** Exactly these values. */
    public static KnobValues oneOf(Integer... values) {
        return new KnobValues(0, 0, 1, false, List.of(values));
    }

    /** Whether {@code v} is allowed with the upper end lowered to {@code limit}. */
    public boolean accepts(int v, int limit) {
        if (oneOf != null) return oneOf.contains(v) && v <= limit;
        return v >= min && v <= Math.min(max, limit) && v % multipleOf == 0 && (!powerOfTwo || Integer.bitCount(v) == 1);
    }

    /** The largest allowed value not above {@code limit} (a default is clamped to it when a device allows less). */
    public int largestUpTo(int limit) {
        if (oneOf != null) return oneOf.stream().filter(v -> v <= limit).max(Integer::compare).orElse(oneOf.getFirst());
        int top = Math.min(max, limit);
        if (powerOfTwo) return Math.max(min, Integer.highestOneBit(Math.max(1, top)));
        return Math.max(min, top - Math.floorMod(top, multipleOf));
    }

    /** "a multiple of 32 from 32 to 1024", "a power of two from 1 to 256", "one of 0, 1", "an integer of at least 1". */
    public String describe(int limit) {
        if (oneOf != null)
            return oneOf.size() == 1 ? "exactly " + oneOf.getFirst()
                    : "one of " + oneOf.stream().map(String::valueOf).collect(Collectors.joining(", "));
        int top = Math.min(max, limit);
        String to = top == Integer.MAX_VALUE ? "" : " to " + top;
        if (powerOfTwo) return "a power of two from " + min + to;
        if (multipleOf > 1) return "a multiple of " + multipleOf + " from " + min + to;
        return top == Integer.MAX_VALUE ? "an integer of at least " + min : "an integer from " + min + to;
    }

    /**
     * Values worth timing: the list, or the powers of two (times the step) in the range up to 1024 or
     * {@code 1024 × step}, with both ends. A knob with a wide or open range names its own candidates.
     */
    public List<Integer> candidates() {
        if (oneOf != null) return oneOf;
        List<Integer> out = new ArrayList<>();
        long top = Math.min(max, 1024L * multipleOf);
        for (long v = Math.max(1, min); v <= top; v *= 2) {
            long m = multipleOf * ((v + multipleOf - 1) / multipleOf);
            if (m <= top && accepts((int) m, Integer.MAX_VALUE) && !out.contains((int) m)) out.add((int) m);
        }
        if (top == max && accepts(max, Integer.MAX_VALUE) && !out.contains(max)) out.add(max);
        if (accepts(min, Integer.MAX_VALUE) && !out.contains(min)) out.addFirst(min);
        return out;
    }
}
