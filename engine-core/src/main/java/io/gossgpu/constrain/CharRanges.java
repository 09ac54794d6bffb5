package io.gossgpu.constrain;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Sets of Unicode scalar values as sorted, disjoint {@code [lo, hi]} pairs in one int array. Surrogates
 * (U+D800..U+DFFF) are never members: no valid UTF-8 spells them, so a set holding only them could never match.
 */
final class CharRanges {
    static final int MAX = Character.MAX_CODE_POINT;
    /** Every scalar value ({@code .}). */
    static final int[] ANY = {0, 0xD7FF, 0xE000, MAX};

    private CharRanges() {}

    static int[] of(int lo, int hi) {
        return union(List.of(new int[] {lo, hi}));
    }

    /** The union of {@code ranges} (each {lo, hi}, any order, may overlap), surrogates left out. */
    static int[] union(List<int[]> ranges) {
        List<int[]> sorted = new ArrayList<>(ranges);
        sorted.sort(Comparator.comparingInt(r -> r[0]));
        List<int[]> out = new ArrayList<>();
        for (int[] r : sorted) {
            int[] last = out.isEmpty() ? null : out.getLast();
            if (last != null && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
            else out.add(new int[] {r[0], r[1]});
        }
        return withoutSurrogates(out);
    }

    /** Every scalar value not in {@code set}. */
    static int[] complement(int[] set) {
        List<int[]> out = new ArrayList<>();
        int next = 0;
        for (int i = 0; i < set.length; i += 2) {
            if (set[i] > next) out.add(new int[] {next, set[i] - 1});
            next = set[i + 1] + 1;
        }
        if (next <= MAX) out.add(new int[] {next, MAX});
        return withoutSurrogates(out);
    }

    private static int[] withoutSurrogates(List<int[]> ranges) {
        List<Integer> flat = new ArrayList<>();
        for (int[] r : ranges) {
            int lo = r[0], hi = r[1];
            if (lo <= 0xD7FF) {
                flat.add(lo);
                flat.add(Math.min(hi, 0xD7FF));
            }
            if (hi >= 0xE000) {
                flat.add(Math.max(lo, 0xE000));
                flat.add(hi);
            }
        }
        return flat.stream().mapToInt(Integer::intValue).toArray();
    }

    static boolean contains(int[] set, int cp) {
        for (int i = 0; i < set.length && set[i] <= cp; i += 2) if (cp <= set[i + 1]) return true;
        return false;
    }

    /** Whether some member of {@code set} lies in {@code [lo, hi]}. */
    static boolean intersects(int[] set, int lo, int hi) {
        for (int i = 0; i < set.length && set[i] <= hi; i += 2) if (set[i + 1] >= lo) return true;
        return false;
    }

    /** Whether every value in {@code [lo, hi]} (no surrogate among them) is a member of {@code set}. */
    static boolean containsAll(int[] set, int lo, int hi) {
        for (int i = 0; i < set.length && set[i] <= lo; i += 2) if (hi <= set[i + 1]) return true;
        return false;
    }
}
