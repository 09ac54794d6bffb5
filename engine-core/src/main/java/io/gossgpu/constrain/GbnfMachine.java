package io.gossgpu.constrain;

import io.gossgpu.GossException;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The byte-level matcher of a {@link GbnfGrammar}: a state is the set of parse stacks still alive (each a linked list
 * of positions in the grammar's code, the top one waiting on a character set) plus the bytes read so far of a
 * multi-byte UTF-8 character. A byte that starts or continues a character keeps the state alive only while some
 * stack could take a character in the range those bytes still allow, so a token trie walk drops dead prefixes early.
 * Only valid UTF-8 is written (no overlong forms, no surrogates).
 *
 * <p>States are interned and remember their transitions, so the many trie nodes that lead to the same state (all
 * letters inside {@code [a-z]*}, say) cost one array read after the first. Thread-safe: the cache is filled racily
 * with immutable states.
 */
public final class GbnfMachine implements ByteMatcher {
    /** Past this many interned states new ones are no longer cached (a grammar with unbounded nesting). */
    private static final int MAX_CACHED = 16_384;
    /** Most rule openings for one character: beyond it a grammar is refused as too ambiguous (and recursion stays shallow). */
    static final int MAX_EXPANSIONS = 5_000;

    private static final Object DEAD = new Object();
    /** At most this many states keep their token mask (25 KB each over the o200k vocabulary); the least recently used goes first. */
    static final int MAX_MASKS = 256;

    private final GbnfGrammar g;
    private final boolean mergeUniform;
    private final ConcurrentHashMap<State, State> interned = new ConcurrentHashMap<>();
    private final State start;
    /** The token masks of interned states, the {@code maxMasks} most recently used. */
    private final LruCache<State, long[]> masks;

    GbnfMachine(GbnfGrammar g) {
        this(g, true, MAX_MASKS);
    }

    /**
     * With {@code mergeUniform} false partial characters always keep their bits: the exact machine tests compare with.
     * At most {@code maxMasks} states keep their token mask.
     */
    GbnfMachine(GbnfGrammar g, boolean mergeUniform, int maxMasks) {
        this.g = g;
        this.mergeUniform = mergeUniform;
        this.masks = new LruCache<>(maxMasks);
        Set<Stack> stacks = new LinkedHashSet<>();
        int[] budget = {MAX_EXPANSIONS};
        for (int a : g.alternatives[g.root]) expand(new Stack(a, null), stacks, budget);
        this.start = intern(new State(stacks.toArray(Stack[]::new), 0, 0, 0));
    }

    /** One parse stack: {@code pos} is where it continues in the grammar's code, {@code next} what follows the rule it is in. */
    static final class Stack {
        final int pos;
        final Stack next;
        private final int hash;

        Stack(int pos, Stack next) {
            this.pos = pos;
            this.next = next;
            this.hash = 31 * pos + (next == null ? 0 : next.hash);
        }

        @Override
        public boolean equals(Object o) {
            if (this == o) return true;
            if (!(o instanceof Stack s) || s.hash != hash) return false;
            Stack a = this, b = s;
            while (a != null && b != null) {
                if (a == b) return true;
                if (a.pos != b.pos) return false;
                a = a.next;
                b = b.next;
            }
            return a == b;
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    /** The empty stack: the whole grammar has been matched. */
    private static final Stack ACCEPT = new Stack(-1, null);

    /**
     * A matcher state: live stacks (in a canonical order), and a partial UTF-8 character: its bits, bytes to come,
     * smallest value its length allows. A partial character is {@code uniform} when every code point its remaining
     * bytes can spell is valid and taken by every stack kept: then which continuation bytes follow cannot matter, so
     * the state forgets its bits (keeping one such code point, {@code rep}, to step with) and all of those states are
     * one (otherwise each lead/second byte of every CJK or emoji prefix in the vocabulary is a state of its own, and
     * a grammar loop over any character such as {@code [^"]{0,40}} fills the intern table with them).
     */
    static final class State {
        final Stack[] stacks;
        final int bits, need, min;
        final boolean uniform;
        final int rep;
        final boolean accepting;
        private final int hash;
        final Object[] next = new Object[256];

        State(Stack[] stacks, int bits, int need, int min) {
            this(stacks, bits, need, min, false, 0);
        }

        /** The uniform partial state of {@code stacks} with {@code need} bytes to come; {@code rep} is a code point they can spell. */
        static State uniform(Stack[] stacks, int need, int rep) {
            return new State(stacks, 0, need, 0, true, rep);
        }

        private State(Stack[] stacks, int bits, int need, int min, boolean uniform, int rep) {
            Arrays.sort(stacks, (x, y) -> Integer.compare(x.hash, y.hash));
            this.stacks = stacks;
            this.bits = bits;
            this.need = need;
            this.min = min;
            this.uniform = uniform;
            this.rep = rep;
            boolean acc = false;
            for (Stack s : stacks) acc |= s == ACCEPT;
            this.accepting = acc && need == 0;
            this.hash = Arrays.hashCode(stacks) * 31 + bits * 7 + need + (uniform ? 1_000_003 : 0);
        }

        @Override
        public boolean equals(Object o) {
            if (this == o) return true;
            if (!(o instanceof State s)
                    || s.hash != hash
                    || s.bits != bits
                    || s.need != need
                    || s.uniform != uniform
                    || s.stacks.length != stacks.length) return false;
            return Set.of(stacks).equals(Set.of(s.stacks));
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    /**
     * The masker's walk, remembered per state: inside a loop such as {@code [^"]*} every character leads back to the
     * same interned state, so its mask (nearly the whole vocabulary, the costliest walk) is computed once while it
     * stays among the {@link #MAX_MASKS} most recently used.
     */
    @Override
    public void allowed(TokenMasker masker, Object state, long[] mask) {
        State s = (State) state;
        long[] known = masks.get(s);
        if (known == null) {
            known = new long[masker.words()];
            masker.walk(this, s, known);
            if (interned.get(s) == s)
                masks.put(s, known); // a state past the intern cap is not met again as the same object
        }
        for (int w = 0; w < mask.length; w++) mask[w] |= known[w];
    }

    /** How many states are interned (tests: a grammar's working set must stay below the cap). */
    int internedStates() {
        return interned.size();
    }

    /** Whether {@code state}'s token mask is kept (tests; does not count as a use). */
    boolean maskKept(Object state) {
        return masks.contains((State) state);
    }

    @Override
    public Object start() {
        return start;
    }

    @Override
    public boolean canEnd(Object state) {
        return ((State) state).accepting;
    }

    @Override
    public Object step(Object state, int b) {
        State s = (State) state;
        Object cached = s.next[b];
        if (cached != null) return cached == DEAD ? null : cached;
        State out = compute(s, b);
        if (out != null) out = intern(out);
        if (interned.size() < MAX_CACHED) s.next[b] = out == null ? DEAD : out;
        return out;
    }

    private State intern(State s) {
        if (interned.size() >= MAX_CACHED) {
            State known = interned.get(s);
            return known != null ? known : s;
        }
        State prev = interned.putIfAbsent(s, s);
        return prev != null ? prev : s;
    }

    private State compute(State s, int b) {
        if (s.need == 0) {
            if (b < 0x80) return stepChar(s, b);
            if (b >= 0xC2 && b <= 0xDF) return partial(s, b & 0x1F, 1, 0x80);
            if (b >= 0xE0 && b <= 0xEF) return partial(s, b & 0x0F, 2, 0x800);
            if (b >= 0xF0 && b <= 0xF4) return partial(s, b & 0x07, 3, 0x10000);
            return null;
        }
        if ((b & 0xC0) != 0x80) return null;
        if (s.uniform) return s.need > 1 ? State.uniform(s.stacks, s.need - 1, s.rep) : stepChar(s, s.rep);
        int bits = s.bits << 6 | (b & 0x3F);
        if (s.need > 1) return partial(s, bits, s.need - 1, s.min);
        if (bits < s.min || bits > CharRanges.MAX || bits >= 0xD800 && bits <= 0xDFFF) return null;
        return stepChar(s, bits);
    }

    /** The state inside a character whose remaining {@code need} bytes are to come, if some stack can take one such character. */
    private State partial(State s, int bits, int need, int min) {
        int blockLo = bits << 6 * need, blockHi = blockLo | (1 << 6 * need) - 1;
        int lo = Math.max(min, blockLo), hi = Math.min(CharRanges.MAX, blockHi);
        if (lo > hi) return null;
        boolean uniform = mergeUniform && lo == blockLo && hi == blockHi && (blockHi < 0xD800 || blockLo > 0xDFFF);
        java.util.List<Stack> taking = new java.util.ArrayList<>();
        for (Stack st : s.stacks) {
            if (st == ACCEPT) continue;
            int[] set = g.sets[g.code[st.pos]];
            if (!CharRanges.intersects(set, lo, hi)) continue;
            taking.add(st);
            uniform &= CharRanges.containsAll(set, lo, hi);
        }
        if (taking.isEmpty()) return null;
        return uniform
                ? State.uniform(taking.toArray(Stack[]::new), need, blockLo)
                : new State(s.stacks, bits, need, min);
    }

    private State stepChar(State s, int cp) {
        Set<Stack> out = new LinkedHashSet<>();
        int[] budget = {MAX_EXPANSIONS};
        for (Stack st : s.stacks) {
            if (st != ACCEPT && CharRanges.contains(g.sets[g.code[st.pos]], cp))
                expand(new Stack(st.pos + 1, st.next), out, budget);
        }
        return out.isEmpty() ? null : new State(out.toArray(Stack[]::new), 0, 0, 0);
    }

    /** Adds the stacks {@code s} stands for once every rule at its top is opened, down to a character set (or the end). */
    private void expand(Stack s, Set<Stack> out, int[] budget) {
        if (--budget[0] < 0)
            throw new GossException(
                    "grammar: too ambiguous (over " + MAX_EXPANSIONS + " rule openings for one character); "
                            + "nested repetitions of optional items multiply, e.g. ((\"a\"?){100}){100}");
        int sym = g.code[s.pos];
        if (sym == GbnfGrammar.END) {
            if (s.next == null) out.add(ACCEPT);
            else expand(s.next, out, budget);
        } else if (sym >= 0) {
            out.add(s);
        } else {
            int rule = -sym - 1;
            // what follows the rule; nothing to keep when the rule ends this alternative (so right recursion stays
            // flat)
            Stack cont = g.code[s.pos + 1] == GbnfGrammar.END ? s.next : new Stack(s.pos + 1, s.next);
            for (int a : g.alternatives[rule]) expand(new Stack(a, cont), out, budget);
        }
    }
}
