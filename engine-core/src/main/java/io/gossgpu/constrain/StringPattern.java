package io.gossgpu.constrain;

import io.gossgpu.GossException;
import io.gossgpu.constrain.GbnfParser.Alt;
import io.gossgpu.constrain.GbnfParser.Chars;
import io.gossgpu.constrain.GbnfParser.Expr;
import io.gossgpu.constrain.GbnfParser.Repeat;
import io.gossgpu.constrain.GbnfParser.Seq;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A string schema's {@code pattern} with its {@code minLength}/{@code maxLength}, compiled to a deterministic
 * automaton over the string's code points (as decoded from JSON, escapes included) that the JSON matcher steps one
 * character at a time. Code points are grouped into classes the automaton cannot tell apart; only code points a
 * reply can write are in any class (no surrogates, and no control characters that JSON spells only as
 * {@code \\uXXXX}, which the matcher does not write inside patterned strings). For every state the lengths of the
 * completions that reach an accepting state are known up to the limits, so {@link #live} says exactly whether a
 * string can still end valid: the matcher never enters a state it cannot finish.
 */
final class StringPattern {
    /** Most states of the automaton (a pattern past it is refused as too complex). */
    static final int MAX_STATES = 4000;

    private static final int MAX_NFA = 40_000;
    /** Code points a patterned string can hold: \b \t \n \f \r (short escapes) and everything from space on. */
    private static final int[] WRITABLE =
            CharRanges.union(List.of(new int[] {8, 10}, new int[] {12, 13}, new int[] {0x20, CharRanges.MAX}));

    final String source;
    final int minLength, maxLength;
    /** Class {@code c} holds code points {@code bounds[c] .. bounds[c + 1] - 1}. */
    private final int[] bounds;
    /** {@code next[q][c]}: the state after a code point of class {@code c}, or -1. */
    private final int[][] next;

    private final boolean[] accepting;
    /**
     * {@code lengths[q]}: bit {@code l} set when some completion of exactly {@code l} code points reaches an accepting
     * state (l up to {@link #cap}); without a maxLength, bit {@code cap} means "of at least cap".
     */
    private final BitSet[] lengths;

    private final int cap;
    /** {@code ascii[q << 7 | cp]}: {@link #step} for an ASCII code point, without the class search (the masker's walks step millions of these). */
    private final int[] ascii;
    /** Without length limits: whether each state can still reach acceptance ({@link #live} at any count), else null. */
    private final boolean[] reachable;
    /** This automaton without the length limits, made once. */
    private volatile StringPattern unlimited;
    /** The token masks precomputed for this string's frames (see {@link PatternMasks}); null until the masker prepares them. */
    volatile PatternMasks masks;

    private StringPattern(
            String source,
            int minLength,
            int maxLength,
            int[] bounds,
            int[][] next,
            boolean[] accepting,
            String where) {
        this.source = source;
        this.minLength = minLength;
        this.maxLength = maxLength;
        this.bounds = bounds;
        this.next = next;
        this.accepting = accepting;
        this.cap = maxLength != Integer.MAX_VALUE ? maxLength : minLength;
        long work = (long) (cap + 1) * next.length * (bounds.length - 1);
        if (work > 200_000_000L)
            throw new GossException("the JSON schema's pattern at " + where
                    + " is too complex together with its length limits for constrained output");
        this.lengths = completionLengths();
        this.reachable = minLength == 0 && maxLength == Integer.MAX_VALUE ? new boolean[next.length] : null;
        if (reachable != null) for (int q = 0; q < next.length; q++) reachable[q] = lengths[q].get(0);
        this.ascii = new int[next.length << 7];
        for (int q = 0; q < next.length; q++)
            for (int cp = 0; cp < 128; cp++) ascii[q << 7 | cp] = next[q][classOf(cp)];
    }

    /** {@code pattern} (a JSON Schema regex) for strings of {@code minLength..maxLength} code points. */
    static StringPattern compile(String pattern, int minLength, int maxLength, String where) {
        Nfa nfa = new Nfa(where);
        int[] frag = nfa.build(RegexParser.parse(pattern, where));
        nfa.accept = frag[1];
        StringPattern p = nfa.determinize(frag[0], pattern, minLength, maxLength);
        if (!p.live(0, 0))
            throw new GossException("the JSON schema at " + where + " allows no string: none matching pattern '"
                    + pattern + "' has " + minLength + (maxLength == Integer.MAX_VALUE ? " or more" : ".." + maxLength)
                    + " characters");
        return p;
    }

    /**
     * The same automaton with no length limits: {@link #live} then says only whether acceptance is reachable, which
     * any completion within the limits implies.
     */
    StringPattern unlimited() {
        StringPattern u = unlimited;
        if (u == null)
            unlimited = u = minLength == 0 && maxLength == Integer.MAX_VALUE
                    ? this
                    : new StringPattern(source, 0, Integer.MAX_VALUE, bounds, next, accepting, "");
        return u;
    }

    /**
     * The counts that {@link #live} and {@link #canEnd} can tell apart: with a maxLength, 0..maxLength (nothing is
     * live past it); without, every count from {@code lengthCap()} on behaves as {@code lengthCap()} does.
     */
    int lengthCap() {
        return cap;
    }

    /** How many states the automaton has (numbered from 0, {@link #start()} first). */
    int states() {
        return next.length;
    }

    int start() {
        return 0;
    }

    /** The state after code point {@code cp}, or -1. */
    int step(int q, int cp) {
        return cp < 128 ? ascii[q << 7 | cp] : next[q][classOf(cp)];
    }

    /** Whether a string may end in {@code q} after {@code count} code points. */
    boolean canEnd(int q, int count) {
        return accepting[q] && count >= minLength && count <= maxLength;
    }

    /** Whether a string in {@code q} after {@code count} code points can still be completed within the limits. */
    boolean live(int q, int count) {
        if (reachable != null) return reachable[q];
        if (count > maxLength) return false;
        int from = Math.max(0, minLength - count);
        int to = maxLength == Integer.MAX_VALUE ? cap : maxLength - count;
        from = Math.min(from, cap);
        int l = lengths[q].nextSetBit(from);
        return l >= 0 && l <= to;
    }

    /** Whether some code point in {@code [lo, hi]} leads from {@code q} to a state live after {@code count} code points. */
    boolean anyLive(int q, int count, int lo, int hi) {
        for (int c = classOf(lo); c < bounds.length - 1 && bounds[c] <= hi; c++) {
            int t = next[q][c];
            if (t >= 0 && live(t, count)) return true;
        }
        return false;
    }

    private int classOf(int cp) {
        int i = Arrays.binarySearch(bounds, cp);
        return i >= 0 ? i : -i - 2;
    }

    private BitSet[] completionLengths() {
        int n = next.length;
        List<List<Integer>> pred = new ArrayList<>();
        for (int q = 0; q < n; q++) pred.add(new ArrayList<>());
        for (int q = 0; q < n; q++) {
            BitSet to = new BitSet();
            for (int t : next[q]) if (t >= 0) to.set(t);
            for (int t = to.nextSetBit(0); t >= 0; t = to.nextSetBit(t + 1))
                pred.get(t).add(q);
        }
        BitSet[] out = new BitSet[n];
        for (int q = 0; q < n; q++) out[q] = new BitSet();
        BitSet at = new BitSet(); // states with a completion of exactly l code points
        for (int q = 0; q < n; q++) if (accepting[q]) at.set(q);
        boolean bounded = maxLength != Integer.MAX_VALUE;
        for (int l = 0; l < cap || bounded && l == cap; l++) {
            for (int q = at.nextSetBit(0); q >= 0; q = at.nextSetBit(q + 1)) out[q].set(l);
            if (at.isEmpty()) break;
            at = predecessors(at, pred);
        }
        if (!bounded) { // bit cap: a completion of cap or more: cap steps back from any state that can reach acceptance
            BitSet reach = new BitSet();
            for (int q = 0; q < n; q++) if (accepting[q]) reach.set(q);
            for (BitSet grow = reach; ; ) {
                BitSet more = predecessors(grow, pred);
                more.andNot(reach);
                if (more.isEmpty()) break;
                reach.or(more);
                grow = more;
            }
            BitSet x = reach;
            for (int l = 0; l < cap && !x.isEmpty(); l++) x = predecessors(x, pred);
            for (int q = x.nextSetBit(0); q >= 0; q = x.nextSetBit(q + 1)) out[q].set(cap);
        }
        return out;
    }

    private static BitSet predecessors(BitSet states, List<List<Integer>> pred) {
        BitSet out = new BitSet();
        for (int t = states.nextSetBit(0); t >= 0; t = states.nextSetBit(t + 1)) for (int q : pred.get(t)) out.set(q);
        return out;
    }

    /** A Thompson automaton: epsilon moves and moves on code-point sets. */
    private static final class Nfa {
        final String where;
        final List<int[]> eps = new ArrayList<>(); // state -> targets
        final List<int[]> sets = new ArrayList<>(); // state -> its move's set, or null
        final List<Integer> moveTo = new ArrayList<>();
        int accept;

        Nfa(String where) {
            this.where = where;
        }

        int state() {
            if (eps.size() >= MAX_NFA)
                throw new GossException("the JSON schema's pattern at " + where
                        + " is too large for constrained output (repetitions expand too far)");
            eps.add(new int[0]);
            sets.add(null);
            moveTo.add(-1);
            return eps.size() - 1;
        }

        void epsilon(int from, int to) {
            int[] e = eps.get(from);
            int[] more = Arrays.copyOf(e, e.length + 1);
            more[e.length] = to;
            eps.set(from, more);
        }

        /** The fragment {start, end} of {@code e}. */
        int[] build(Expr e) {
            switch (e) {
                case Chars c -> {
                    int s = state(), t = state();
                    sets.set(s, intersect(c.ranges(), WRITABLE));
                    moveTo.set(s, t);
                    return new int[] {s, t};
                }
                case Seq q -> {
                    int s = state(), t = s;
                    for (Expr item : q.items()) {
                        int[] f = build(item);
                        epsilon(t, f[0]);
                        t = f[1];
                    }
                    return new int[] {s, t};
                }
                case Alt a -> {
                    int s = state(), t = state();
                    for (Expr o : a.options()) {
                        int[] f = build(o);
                        epsilon(s, f[0]);
                        epsilon(f[1], t);
                    }
                    return new int[] {s, t};
                }
                case Repeat r -> {
                    int s = state(), t = s;
                    for (int i = 0; i < r.min(); i++) {
                        int[] f = build(r.body());
                        epsilon(t, f[0]);
                        t = f[1];
                    }
                    if (r.max() < 0) {
                        int[] f = build(r.body());
                        int end = state();
                        epsilon(t, f[0]);
                        epsilon(t, end);
                        epsilon(f[1], f[0]);
                        epsilon(f[1], end);
                        return new int[] {s, end};
                    }
                    int end = state();
                    for (int i = r.min(); i < r.max(); i++) {
                        int[] f = build(r.body());
                        epsilon(t, end);
                        epsilon(t, f[0]);
                        t = f[1];
                    }
                    epsilon(t, end);
                    return new int[] {s, end};
                }
                default -> throw new IllegalStateException("not a regex part: " + e);
            }
        }

        private BitSet closure(BitSet states) {
            BitSet out = (BitSet) states.clone();
            int[] stack = new int[eps.size()];
            int top = 0;
            for (int q = states.nextSetBit(0); q >= 0; q = states.nextSetBit(q + 1)) stack[top++] = q;
            while (top > 0) {
                int q = stack[--top];
                for (int t : eps.get(q))
                    if (!out.get(t)) {
                        out.set(t);
                        stack[top++] = t;
                    }
            }
            return out;
        }

        StringPattern determinize(int start, String source, int minLength, int maxLength) {
            TreeSet<Integer> cuts = new TreeSet<>(List.of(0, CharRanges.MAX + 1));
            List<Integer> movers = new ArrayList<>();
            for (int q = 0; q < sets.size(); q++) {
                int[] set = sets.get(q);
                if (set == null) continue;
                movers.add(q);
                for (int i = 0; i < set.length; i += 2) {
                    cuts.add(set[i]);
                    cuts.add(set[i + 1] + 1);
                }
            }
            int[] bounds = cuts.stream().mapToInt(Integer::intValue).toArray();
            int classes = bounds.length - 1;
            // per mover: the classes its set covers
            Map<Integer, BitSet> covers = new HashMap<>();
            for (int q : movers) {
                BitSet b = new BitSet(classes);
                int[] set = sets.get(q);
                for (int c = 0; c < classes; c++) if (CharRanges.contains(set, bounds[c])) b.set(c);
                covers.put(q, b);
            }
            Map<BitSet, Integer> ids = new HashMap<>();
            List<BitSet> states = new ArrayList<>();
            List<int[]> table = new ArrayList<>();
            BitSet first = new BitSet();
            first.set(start);
            first = closure(first);
            ids.put(first, 0);
            states.add(first);
            for (int i = 0; i < states.size(); i++) {
                BitSet cur = states.get(i);
                int[] row = new int[classes];
                for (int c = 0; c < classes; c++) {
                    BitSet to = new BitSet();
                    for (int q = cur.nextSetBit(0); q >= 0; q = cur.nextSetBit(q + 1))
                        if (sets.get(q) != null && covers.get(q).get(c)) to.set(moveTo.get(q));
                    if (to.isEmpty()) {
                        row[c] = -1;
                        continue;
                    }
                    BitSet closed = closure(to);
                    Integer id = ids.get(closed);
                    if (id == null) {
                        if (states.size() >= MAX_STATES)
                            throw new GossException("the JSON schema's pattern at " + where
                                    + " is too complex for constrained output (over " + MAX_STATES
                                    + " automaton states)");
                        id = states.size();
                        ids.put(closed, id);
                        states.add(closed);
                    }
                    row[c] = id;
                }
                table.add(row);
            }
            boolean[] accepting = new boolean[states.size()];
            for (int i = 0; i < accepting.length; i++)
                accepting[i] = states.get(i).get(accept);
            int[][] next = table.toArray(int[][]::new);
            int[] block = minimalBlocks(next, accepting);
            int blocks = 0;
            for (int b : block) blocks = Math.max(blocks, b + 1);
            int[][] merged = new int[blocks][];
            boolean[] mergedAccepting = new boolean[blocks];
            for (int q = 0; q < next.length; q++) {
                if (merged[block[q]] != null) continue;
                int[] row = new int[classes];
                for (int c = 0; c < classes; c++) row[c] = next[q][c] < 0 ? -1 : block[next[q][c]];
                merged[block[q]] = row;
                mergedAccepting[block[q]] = accepting[q];
            }
            return new StringPattern(source, minLength, maxLength, bounds, merged, mergedAccepting, where);
        }

        /**
         * The states of the minimal automaton (Moore's refinement): states that accept the same strings share a block;
         * blocks are numbered by their first state, so the start state stays 0. Fewer states mean fewer frames for the
         * masker to precompute.
         */
        private static int[] minimalBlocks(int[][] next, boolean[] accepting) {
            int n = next.length;
            int[] block = new int[n];
            for (int q = 0; q < n; q++) block[q] = accepting[q] ? 1 : 0;
            for (int count = -1; ; ) {
                Map<List<Integer>, Integer> ids = new HashMap<>();
                int[] refined = new int[n];
                for (int q = 0; q < n; q++) {
                    List<Integer> sig = new ArrayList<>(next[q].length + 1);
                    sig.add(block[q]);
                    for (int t : next[q]) sig.add(t < 0 ? -1 : block[t]);
                    Integer id = ids.get(sig);
                    if (id == null) ids.put(sig, id = ids.size());
                    refined[q] = id;
                }
                block = refined;
                if (ids.size() == count) return block;
                count = ids.size();
            }
        }

        private static int[] intersect(int[] a, int[] b) {
            return CharRanges.complement(CharRanges.union(toList(CharRanges.complement(a), CharRanges.complement(b))));
        }

        private static List<int[]> toList(int[]... sets) {
            List<int[]> out = new ArrayList<>();
            for (int[] s : sets) for (int i = 0; i < s.length; i += 2) out.add(new int[] {s[i], s[i + 1]});
            return out;
        }
    }
}
