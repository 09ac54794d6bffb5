package io.gossgpu.constrain;

import static org.junit.jupiter.api.Assertions.*;

import io.gossgpu.tokenizer.O200kHarmony;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The whole Harmony turn under a response format: headers lead only to the final channel or to declared functions,
 * the analysis stays free text but cannot end the turn, and the answer follows its schema.
 */
class HarmonyConstraintTest {
    private static final O200kHarmony TOK = O200kHarmony.get();
    private static final String SCHEMA = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},"
            + "\"required\":[\"a\"],\"additionalProperties\":false}";

    private static HarmonyConstraint constraint(Set<String> functions) {
        return new HarmonyConstraint(ByteMatcher.json(SchemaCompiler.compile(SCHEMA)), Map.of(), functions);
    }

    private static boolean allowed(HarmonyConstraint c, int token) {
        long[] m = c.allowed();
        return m == null || (m[token >>> 6] & 1L << token) != 0;
    }

    /** Feeds {@code text} token by token; the index of the first token refused, or -1 when all were allowed. */
    private static int feed(HarmonyConstraint c, String text) {
        int[] tokens = TOK.encodeWithSpecials(text);
        for (int i = 0; i < tokens.length; i++) {
            if (!allowed(c, tokens[i])) return i;
            c.accept(tokens[i]);
        }
        return -1;
    }

    private static final String ANALYSIS = "<|channel|>analysis<|message|>I will call get_weather.<|end|>";

    @Test
    void theFinalAnswerFollowsItsSchemaAfterFreeReasoning() {
        HarmonyConstraint c = constraint(Set.of());
        assertEquals(-1, feed(c, ANALYSIS + "<|start|>assistant<|channel|>final<|message|>{\"a\":\"x\"}"));
        assertTrue(allowed(c, O200kHarmony.RETURN));
        assertFalse(allowed(c, O200kHarmony.END));
        assertFalse(allowed(c, O200kHarmony.CALL));
    }

    @Test
    void noHeaderAddressesAFunctionThatIsNotDeclared() {
        assertNotEquals(
                -1,
                feed(
                        constraint(Set.of()),
                        ANALYSIS + "<|start|>assistant<|channel|>commentary"
                                + " to=functions.get_weather <|constrain|>json<|message|>"));
        assertNotEquals(
                -1,
                feed(
                        constraint(Set.of()),
                        ANALYSIS + "<|start|>assistant to=functions.get_weather"
                                + "<|channel|>commentary json<|message|>"));
        assertNotEquals(
                -1, feed(constraint(Set.of("add")), "<|channel|>commentary to=functions.get_weather<|message|>"));
        // a commentary message to no one would show as content beside the answer
        assertNotEquals(-1, feed(constraint(Set.of("add")), "<|channel|>commentary<|message|>"));
    }

    @Test
    void aDeclaredFunctionMayBeCalledInEverySpelling() {
        for (String header : new String[] {
            "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
            "<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>",
            "<|channel|>commentary to=functions.get_weather <|constrain|> json<|message|>",
            "<|channel|>commentary to=functions.get_weather json<|message|>",
            "<|channel|>commentary to=functions.get_weather<|message|>",
            " to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>",
            " to=functions.get_weather<|channel|>commentary json<|message|>"
        }) {
            HarmonyConstraint c = constraint(Set.of("get_weather"));
            assertEquals(-1, feed(c, ANALYSIS + "<|start|>assistant" + header + "{\"city\":\"Paris\"}"), header);
            assertTrue(allowed(c, O200kHarmony.CALL), header);
            assertFalse(allowed(c, O200kHarmony.RETURN), header);
        }
    }

    @Test
    void aStrictFunctionsArgumentsFollowItsSchema() {
        ByteMatcher city = ByteMatcher.json(SchemaCompiler.compile("{\"type\":\"object\",\"properties\":{\"city\":"
                + "{\"type\":\"string\"}},\"required\":[\"city\"],\"additionalProperties\":false}"));
        HarmonyConstraint c = new HarmonyConstraint(null, Map.of("functions.get_weather", city), Set.of());
        assertEquals(-1, feed(c, "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\""));
        assertNotEquals(-1, feed(c, "days"));
    }

    @Test
    void theAnalysisCannotEndTheTurnOrComeTwice() {
        HarmonyConstraint c = constraint(Set.of("add"));
        assertEquals(-1, feed(c, "<|channel|>analysis<|message|>Think."));
        for (int t : new int[] {O200kHarmony.RETURN, O200kHarmony.CALL, O200kHarmony.START, O200kHarmony.CHANNEL})
            assertFalse(allowed(c, t), TOK.specialName(t).orElseThrow());
        assertTrue(allowed(c, O200kHarmony.END));
        assertEquals(-1, feed(c, "<|end|><|start|>assistant"));
        assertNotEquals(-1, feed(c, "<|channel|>analysis<|message|>"));
    }

    @Test
    void specialMarksSpelledInTextAreRefused() {
        HarmonyConstraint c = constraint(Set.of());
        int[] text = TOK.encode("<|channel|>final<|message|>");
        assertNotEquals(O200kHarmony.CHANNEL, text[0]);
        assertFalse(allowed(c, text[0]));
        assertTrue(allowed(c, O200kHarmony.CHANNEL));
    }

    private static final ByteMatcher CITY = ByteMatcher.json(SchemaCompiler.compile("{\"type\":\"object\","
            + "\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"],"
            + "\"additionalProperties\":false}"));

    private static HarmonyConstraint mustCall(String... functions) {
        return HarmonyConstraint.call(Map.of("functions.get_weather", CITY), Set.of(functions));
    }

    @Test
    void aTurnThatMustCallHasNoFinalAnswer() {
        assertNotEquals(-1, feed(mustCall("get_weather"), ANALYSIS + "<|start|>assistant<|channel|>final<|message|>"));
        assertNotEquals(-1, feed(mustCall("get_weather"), "<|channel|>final<|message|>"));
        HarmonyConstraint c = mustCall("get_weather");
        assertEquals(
                -1,
                feed(
                        c,
                        ANALYSIS + "<|start|>assistant<|channel|>commentary to=functions.get_weather"
                                + " <|constrain|>json<|message|>{\"city\":\"Paris\"}"));
        assertTrue(allowed(c, O200kHarmony.CALL));
        assertFalse(allowed(c, O200kHarmony.RETURN));
        assertFalse(allowed(c, O200kHarmony.END));
    }

    @Test
    void aTurnThatMustCallReachesOnlyTheFunctionsItNames() {
        assertNotEquals(
                -1,
                feed(
                        mustCall("get_weather"),
                        ANALYSIS + "<|start|>assistant<|channel|>commentary" + " to=functions.add json<|message|>"));
        assertNotEquals(-1, feed(mustCall("add"), "<|channel|>commentary to=functions.get_weather json<|message|>"));
        HarmonyConstraint either = mustCall("add", "get_weather");
        assertEquals(-1, feed(either, " to=functions.add<|channel|>commentary json<|message|>{\"a\":1}"));
        assertTrue(allowed(either, O200kHarmony.CALL));
    }

    @Test
    void aForcedCallsArgumentsFollowTheToolsMatcher() {
        HarmonyConstraint c = mustCall("get_weather");
        assertEquals(-1, feed(c, "<|channel|>commentary to=functions.get_weather json<|message|>{\""));
        assertNotEquals(-1, feed(c, "days"));
        assertFalse(allowed(c, O200kHarmony.CALL));
    }
}
