package io.gossgpu.backend;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The values a {@link Knob} accepts: a range (every integer, multiples of a step, or powers of two), an
 * explicit list, or names ({@link #named}: the value is the name's index, the text is the name). A device may
 * lower the upper end ({@code limit}); the sentences this builds go into the knob's error message ("must be a
 * multiple of 32 from 32 to 1024").
 */
public record KnobValues(
        int min, int max, int multipleOf, boolean powerOfTwo, List<Integer> oneOf, List<String> names) {
    public KnobValues {
        oneOf = oneOf == null ? null : List.copyOf(oneOf);
        names = names == null ? null : List.copyOf(names);
    }

    /** Every integer in {@code min..max} ({@code Integer.MAX_VALUE}: no upper end). */
    public static KnobValues range(int min, int max) {
        return new KnobValues(min, max, 1, false, null, null);
    }

    /** Multiples of {@code step} in {@code min..max}. */
    public static KnobValues multipleOf(int step, int min, int max) {
        return new KnobValues(min, max, step, false, null, null);
    }

    /** Powers of two in {@code min..max}. */
    public static KnobValues powerOfTwo(int min, int max) {
        return new KnobValues(min, max, 1, true, null, null);
    }

    /** Exactly these values. */
    public static KnobValues oneOf(Integer... values) {
        return new KnobValues(0, 0, 1, false, List.of(values), null);
    }

    /**
     * One of these names ({@code GOSS_CPU_KERNELS=avx2}), matched without regard to case; the value is the name's
     * index. A device's {@code limit} is an index: it allows the names up to it, so list them from the most to the
     * least widely supported.
     */
    public static KnobValues named(String... names) {
        return new KnobValues(0, names.length - 1, 1, false, null, List.of(names));
    }

    /** The value of {@code text}: its name's index, or the integer; null when it is neither. */
    Integer parse(String text) {
        String t = text.strip();
        if (names != null) {
            for (int i = 0; i < names.size(); i++) if (names.get(i).equalsIgnoreCase(t)) return i;
            return null;
        }
        try {
            return Integer.parseInt(t);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** How {@code value} is written: its name, or the integer. */
    public String text(int value) {
        return names != null && value >= 0 && value < names.size() ? names.get(value) : Integer.toString(value);
    }

    /** Whether {@code v} is allowed with the upper end lowered to {@code limit}. */
    public boolean accepts(int v, int limit) {
        if (oneOf != null) return oneOf.contains(v) && v <= limit;
        return v >= min
                && v <= Math.min(max, limit)
                && v % multipleOf == 0
                && (!powerOfTwo || Integer.bitCount(v) == 1);
    }

    /** The largest allowed value not above {@code limit} (a default is clamped to it when a device allows less). */
    public int largestUpTo(int limit) {
        if (oneOf != null)
            return oneOf.stream().filter(v -> v <= limit).max(Integer::compare).orElse(oneOf.getFirst());
        int top = Math.min(max, limit);
        if (powerOfTwo) return Math.max(min, Integer.highestOneBit(Math.max(1, top)));
        return Math.max(min, top - Math.floorMod(top, multipleOf));
    }

    /**
     * "a multiple of 32 from 32 to 1024", "a power of two from 1 to 256", "one of 0, 1", "an integer of at least 1",
     * "one of auto, java, avx2".
     */
    public String describe(int limit) {
        if (names != null) {
            List<String> allowed = names.subList(0, (int) Math.max(1, Math.min(names.size(), limit + 1L)));
            return allowed.size() == 1 ? "exactly " + allowed.getFirst() : "one of " + String.join(", ", allowed);
        }
        if (oneOf != null)
            return oneOf.size() == 1
                    ? "exactly " + oneOf.getFirst()
                    : "one of " + oneOf.stream().map(String::valueOf).collect(Collectors.joining(", "));
        int top = Math.min(max, limit);
        String to = top == Integer.MAX_VALUE ? "" : " to " + top;
        if (powerOfTwo) return "a power of two from " + min + to;
        if (multipleOf > 1) return "a multiple of " + multipleOf + " from " + min + to;
        return top == Integer.MAX_VALUE ? "an integer of at least " + min : "an integer from " + min + to;
    }

    /**
     * Values worth timing: every name, the list, or the powers of two (times the step) in the range up to 1024 or
     * {@code 1024 × step}, with both ends. A knob with a wide or open range names its own candidates.
     */
    public List<Integer> candidates() {
        if (names != null)
            return java.util.stream.IntStream.range(0, names.size()).boxed().toList();
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
