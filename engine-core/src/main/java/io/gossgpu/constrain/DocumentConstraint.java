package io.gossgpu.constrain;

import io.gossgpu.generate.TokenConstraint;
import io.gossgpu.tokenizer.O200kHarmony;
import java.util.Arrays;

/**
 * A whole generation held to one document (raw completion, no Harmony): from the first token on, every token must
 * keep {@code matcher}'s state alive, and once the document may end, {@code endToken} may come (and only it, when the
 * document cannot go on). One per generation.
 */
public final class DocumentConstraint implements TokenConstraint {
    private final O200kHarmony tok = O200kHarmony.get();
    private final TokenMasker masker = TokenMasker.get();
    private final ByteMatcher matcher;
    private final int endToken;
    private final long[] mask;
    private Object state;

    public DocumentConstraint(ByteMatcher matcher, int endToken) {
        this.matcher = matcher;
        this.endToken = endToken;
        this.state = matcher.start();
        this.mask = new long[masker.words()];
    }

    @Override
    public long[] allowed() {
        Arrays.fill(mask, 0);
        if (state == null) return mask; // ended: the generation stops at the end token
        matcher.allowed(masker, state, mask);
        if (matcher.canEnd(state)) mask[endToken >>> 6] |= 1L << endToken;
        return mask;
    }

    @Override
    public int[] prefixes() {
        return masker.prefixes();
    }

    @Override
    public int closer() {
        return state == null ? -1 : masker.closer(state);
    }

    @Override
    public int[] endTokens() {
        return new int[] {endToken};
    }

    @Override
    public void accept(int token) {
        if (state == null) return;
        state = token == endToken || token >= O200kHarmony.NUM_RANKS
                ? null
                : matcher.step(state, tok.tokenBytes(token));
    }
}
