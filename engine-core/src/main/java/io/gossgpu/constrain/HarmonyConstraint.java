package io.gossgpu.constrain;

import io.gossgpu.generate.TokenConstraint;
import io.gossgpu.harmony.HarmonyStreamParser;
import io.gossgpu.tokenizer.O200kHarmony;

import java.util.Arrays;
import java.util.Map;

/**
 * Structured output over Harmony: the reply runs free (reasoning on the analysis channel, headers) until a message
 * whose content is constrained begins: the final channel's answer (by {@code answer}) or a call to a function that
 * has a grammar (by {@code tools}, keyed by recipient such as {@code functions.get_weather}). From that message's
 * first content token on, every token must keep its document valid (a JSON Schema's or a GBNF grammar's
 * {@link ByteMatcher}), and once the document is complete the message can end only with {@code <|return|>} (an answer) or {@code <|call|>} (a call). One per generation.
 */
public final class HarmonyConstraint implements TokenConstraint {
    private final O200kHarmony tok = O200kHarmony.get();
    private final TokenMasker masker = TokenMasker.get();
    private final HarmonyStreamParser parser = new HarmonyStreamParser(tok);
    private final ByteMatcher answer;
    private final Map<String, ByteMatcher> tools;
    private final long[] mask;
    /** The matcher and its state for the constrained message being written; null while free. */
    private ByteMatcher matcher;
    private Object state;
    private int endToken;

    /** @param answer the final answer's matcher, or null to leave it free; {@code tools}: matchers of function arguments */
    public HarmonyConstraint(ByteMatcher answer, Map<String, ByteMatcher> tools) {
        this.answer = answer;
        this.tools = Map.copyOf(tools);
        this.mask = new long[masker.words()];
    }

    public HarmonyConstraint(ByteMatcher answer) {
        this(answer, Map.of());
    }

    /** Whether a constrained message is being written. */
    public boolean active() {
        return state != null;
    }

    @Override
    public long[] allowed() {
        if (state == null) return null;
        Arrays.fill(mask, 0);
        matcher.allowed(masker, state, mask);
        if (matcher.canEnd(state)) mask[endToken >>> 6] |= 1L << endToken;
        return mask;
    }

    @Override
    public void accept(int token) {
        if (state != null) {
            if (token == endToken) state = null;
            else if (token < O200kHarmony.NUM_RANKS) state = matcher.step(state, tok.tokenBytes(token));
            else state = null; // cannot happen when the token was allowed
        }
        parser.accept(token);
        if (state == null && parser.state() == HarmonyStreamParser.State.CONTENT && parser.currentContent().isEmpty()) {
            String recipient = parser.currentRecipient();
            ByteMatcher g = null;
            if (recipient != null && !"all".equals(recipient)) {
                g = tools.get(recipient);
                endToken = O200kHarmony.CALL;
            } else if ("final".equals(parser.currentChannel())) {
                g = answer;
                endToken = O200kHarmony.RETURN;
            }
            if (g != null) {
                matcher = g;
                state = g.start();
            }
        }
    }
}
