package io.gossgpu.constrain;

/**
 * A byte-level matcher that a constrained message follows (a JSON Schema's {@link JsonMachine}, a GBNF grammar's
 * {@link GbnfMachine}). States are immutable values; {@link #step} returns null on a byte the language cannot
 * continue with, and every live state can still be completed, so a decoder that keeps the state alive always ends
 * with a document of the language. {@link TokenMasker} turns a state into the tokens that may come next.
 */
public interface ByteMatcher {
    /** The state before the first byte. */
    Object start();

    /** The state after byte {@code b} (0..255), or null when {@code b} cannot come next. */
    Object step(Object state, int b);

    /** Whether the document may end in {@code state}. */
    boolean canEnd(Object state);

    /** The state after all of {@code bytes}, or null. */
    default Object step(Object state, byte[] bytes) {
        for (int i = 0; i < bytes.length && state != null; i++) state = step(state, bytes[i] & 0xff);
        return state;
    }

    /** The ordinary tokens {@code state} can take next, or-ed into {@code mask} (the masker's trie walk unless a matcher knows better). */
    default void allowed(TokenMasker masker, Object state, long[] mask) {
        masker.walk(this, state, mask);
    }

    /**
     * The matcher of a compiled JSON Schema (with the masker's fast path for strings). When the schema has strings
     * with a pattern, their masks are precomputed here ({@link TokenMasker#prepare}), once per compiled schema.
     */
    static ByteMatcher json(JsonGrammar grammar) {
        if (grammar != null && !PatternMasks.in(grammar).isEmpty())
            TokenMasker.get().prepare(grammar);
        return new ByteMatcher() {
            @Override
            public Object start() {
                return JsonMachine.start(grammar);
            }

            @Override
            public Object step(Object state, int b) {
                return JsonMachine.step(state, b);
            }

            @Override
            public Object step(Object state, byte[] bytes) {
                return JsonMachine.step(state, bytes);
            }

            @Override
            public boolean canEnd(Object state) {
                return JsonMachine.canEnd(state);
            }

            @Override
            public void allowed(TokenMasker masker, Object state, long[] mask) {
                masker.allowed(state, mask);
            }
        };
    }
}
