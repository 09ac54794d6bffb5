package io.gossgpu.constrain;

import io.gossgpu.generate.TokenConstraint;
import io.gossgpu.harmony.HarmonyStreamParser;
import io.gossgpu.tokenizer.O200kHarmony;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Structured output over a whole Harmony turn. The reasoning stays free: one analysis message of ordinary tokens,
 * ended by {@code <|end|>}. Every header is held to {@link HarmonyHeaders}: after the analysis only the final channel
 * or a call to a declared function may follow, so a model cannot escape the format by addressing a tool no one
 * offered. The final answer follows {@code answer} (free text when null) and ends with {@code <|return|>}; a call's
 * arguments follow the function's matcher in {@code tools} (keyed by recipient such as {@code functions.get_weather};
 * free text when it has none) and end with {@code <|call|>}. Inside a document every token must keep it valid (a
 * JSON Schema's or a GBNF grammar's {@link ByteMatcher}), and the end token may come once it is complete. A turn
 * that must call ({@link #call}) has no final channel: after the analysis its one way on is a call. One per
 * generation; the prompt must end with {@code <|start|>assistant}.
 */
public final class HarmonyConstraint implements TokenConstraint {
    private static volatile long[] ordinary;
    private final O200kHarmony tok = O200kHarmony.get();
    private final TokenMasker masker = TokenMasker.get();
    private final HarmonyStreamParser parser = new HarmonyStreamParser(tok);
    private final ByteMatcher answer;
    private final Map<String, ByteMatcher> tools;
    private final long[] mask;
    /** The header being written and its node, or null while a message's content is. */
    private HarmonyHeaders headers;

    private int node;
    private final HarmonyHeaders afterEnd;
    /** The matcher and its state of the document being written; state null while the content is free text. */
    private ByteMatcher matcher;

    private Object state;
    private int endToken;
    private boolean done;

    /**
     * @param answer    the final answer's matcher, or null to leave it free text
     * @param tools     matchers of function arguments, by recipient ({@code functions.NAME})
     * @param functions the declared functions (names) a reply may call: those in {@code tools} and any others
     */
    public HarmonyConstraint(ByteMatcher answer, Map<String, ByteMatcher> tools, Set<String> functions) {
        this(answer, tools, functions, true);
    }

    /**
     * A turn whose reply must be a call to one of {@code functions} (a tool choice that insists): the analysis stays
     * free, then the only header is such a call, its arguments following {@code tools}' matcher for it (keyed by
     * recipient, as above; free text where there is none), and {@code <|call|>} ends the turn.
     */
    public static HarmonyConstraint call(Map<String, ByteMatcher> tools, Set<String> functions) {
        if (functions.isEmpty()) throw new IllegalArgumentException("a turn that must call needs a function to call");
        return new HarmonyConstraint(null, tools, functions, false);
    }

    private HarmonyConstraint(
            ByteMatcher answer, Map<String, ByteMatcher> tools, Set<String> functions, boolean mayAnswer) {
        this.answer = answer;
        this.tools = Map.copyOf(tools);
        this.mask = new long[masker.words()];
        Set<String> names = new HashSet<>(functions);
        if (mayAnswer) // a strict tool is declared; a turn that must call reaches only the functions it names
        for (String r : tools.keySet()) if (r.startsWith("functions.")) names.add(r.substring("functions.".length()));
        this.headers = new HarmonyHeaders(false, mayAnswer, names);
        this.afterEnd = new HarmonyHeaders(true, mayAnswer, names);
    }

    public HarmonyConstraint(ByteMatcher answer, Map<String, ByteMatcher> tools) {
        this(answer, tools, Set.of());
    }

    public HarmonyConstraint(ByteMatcher answer) {
        this(answer, Map.of());
    }

    /** Whether a constrained document is being written. */
    public boolean active() {
        return state != null;
    }

    @Override
    public long[] allowed() {
        if (done) {
            Arrays.fill(mask, 0);
            return mask;
        }
        if (headers != null) return headers.allowed(node);
        if (matcher == null) {
            System.arraycopy(ordinary(), 0, mask, 0, mask.length);
        } else {
            Arrays.fill(mask, 0);
            matcher.allowed(masker, state, mask);
            if (!matcher.canEnd(state)) return mask;
        }
        mask[endToken >>> 6] |= 1L << endToken;
        return mask;
    }

    @Override
    public int[] prefixes() {
        return masker.prefixes();
    }

    @Override
    public int closer() {
        return headers == null && matcher != null && !done ? masker.closer(state) : -1;
    }

    @Override
    public int[] endTokens() {
        return ENDS;
    }

    private static final int[] ENDS = {O200kHarmony.RETURN, O200kHarmony.CALL, O200kHarmony.END};

    @Override
    public void accept(int token) {
        parser.accept(token);
        if (done) return;
        if (headers != null) {
            node = headers.step(node, token);
            if (token != O200kHarmony.MESSAGE) {
                if (node < 0) done = true; // cannot happen when the token was allowed
                return;
            }
            headers = null;
            begin();
            return;
        }
        if (token == endToken) {
            if (token == O200kHarmony.END) {
                headers = afterEnd;
                node = headers.start();
            } else {
                done = true;
            }
            return;
        }
        if (matcher != null) {
            state = token < O200kHarmony.NUM_RANKS ? matcher.step(state, tok.tokenBytes(token)) : null;
            if (state == null) done = true; // cannot happen when the token was allowed
        }
    }

    /** A message's content begins (the parser has read its header): what it must be and how it ends. */
    private void begin() {
        String recipient = parser.currentRecipient();
        if (recipient != null && !"all".equals(recipient)) {
            matcher = tools.get(recipient);
            endToken = O200kHarmony.CALL;
        } else if ("final".equals(parser.currentChannel())) {
            matcher = answer;
            endToken = O200kHarmony.RETURN;
        } else {
            matcher = null;
            endToken = O200kHarmony.END;
        }
        state = matcher == null ? null : matcher.start();
    }

    /** Every ordinary token (the special ones left out). */
    private long[] ordinary() {
        long[] o = ordinary;
        if (o == null) {
            o = new long[masker.words()];
            for (int id = 0; id < O200kHarmony.NUM_RANKS; id++) o[id >>> 6] |= 1L << id;
            ordinary = o;
        }
        return o;
    }
}
