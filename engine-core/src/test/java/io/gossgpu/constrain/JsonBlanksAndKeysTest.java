package io.gossgpu.constrain;

import static org.junit.jupiter.api.Assertions.*;

import io.gossgpu.tokenizer.O200kHarmony;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Bounded whitespace (none around the document; between tokens nothing, one space, or a newline and at most
 * {@link JsonMachine#INDENT} spaces per level) and free keys that cannot repeat, byte by byte and in the token mask.
 */
class JsonBlanksAndKeysTest {
    private static final ByteMatcher OBJECT = ByteMatcher.json(SchemaCompiler.anyObject());
    private static final ByteMatcher META = ByteMatcher.json(SchemaCompiler.compile(
            "{\"type\":\"object\",\"properties\":{\"meta\":{\"type\":\"object\",\"additionalProperties\":"
                    + "{\"type\":\"integer\"}}},\"required\":[\"meta\"],\"additionalProperties\":false}"));

    private static Object run(ByteMatcher m, String text) {
        return m.step(m.start(), text.getBytes(StandardCharsets.UTF_8));
    }

    private static boolean valid(ByteMatcher m, String doc) {
        Object s = run(m, doc);
        return s != null && m.canEnd(s);
    }

    @Test
    void blanksBetweenTokensAreBounded() {
        assertTrue(valid(OBJECT, "{\"a\":1}"));
        assertTrue(valid(OBJECT, "{\"a\": 1, \"b\" : [1, 2]}"));
        assertTrue(valid(OBJECT, "{\n  \"a\": {\n    \"b\": [\n      1\n    ]\n  }\n}"));
        assertTrue(valid(OBJECT, "{\n    \"a\": {\n        \"b\": 1\n    }\n}"));
        assertNull(run(OBJECT, " {"), "leading space");
        assertNull(run(OBJECT, "\n{"), "leading newline");
        assertNull(run(OBJECT, "{}" + " "), "trailing space");
        assertNull(run(OBJECT, "{\"a\":  1"), "two spaces");
        assertNull(run(OBJECT, "{\"a\":\t1"), "tab");
        assertNull(run(OBJECT, "{\n\n\"a\":1"), "two newlines");
        assertNull(run(OBJECT, "{ \n\"a\":1"), "space then newline");
        assertNull(run(OBJECT, "{\"a\":\r\n1"), "carriage return");
        assertNotNull(run(OBJECT, "{\n    \"a\""), "four spaces at depth 1");
        assertNull(run(OBJECT, "{\n     \"a\""), "five spaces at depth 1");
        assertNotNull(run(OBJECT, "{\"a\":[\n        1"), "eight at depth 2");
        assertNull(run(OBJECT, "{\"a\":[\n         1"), "nine at depth 2");
        assertNull(run(OBJECT, "{\"a\":1 \n"), "after a number too");
    }

    @Test
    void freeKeysCannotRepeat() {
        assertTrue(valid(OBJECT, "{\"a\":1,\"b\":2,\"ab\":3}"));
        assertNotNull(run(OBJECT, "{\"a\":1,\"a"));
        assertNull(run(OBJECT, "{\"a\":1,\"a\""));
        assertNull(run(OBJECT, "{\"a\":1,\"b\":{\"c\":1,\"c\""), "nested object of json_object");
        assertTrue(valid(OBJECT, "{\"a\":{\"a\":{\"a\":1}}}"), "the same key at other levels");
        assertTrue(valid(META, "{\"meta\":{\"k\":1,\"j\":2}}"));
        assertNull(run(META, "{\"meta\":{\"k\":1,\"k\""), "additionalProperties");
    }

    /** The masker's fast path for a free key is the exact walk of every token. */
    @Test
    void theMaskOfAFreeKeyRefusesRepeats() {
        TokenMasker masker = TokenMasker.get();
        O200kHarmony tok = O200kHarmony.get();
        for (String prefix :
                new String[] {"{\"", "{\"a\":1,\"", "{\"name\":1,\"x\":{\"y\":2},\"", "{\"name\":1,\"na"}) {
            Object s = run(OBJECT, prefix);
            long[] fast = masker.allowed(s), exact = new long[masker.words()];
            masker.walk(OBJECT, s, exact);
            assertArrayEquals(exact, fast, prefix);
        }
        int quote = tok.encode("\"")[0], quoteColon = tok.encode("\":")[0];
        assertEquals(1, tok.encode("\":").length);
        long[] repeat = masker.allowed(run(OBJECT, "{\"name\":1,\"name"));
        long[] fresh = masker.allowed(run(OBJECT, "{\"name\":1,\"nam"));
        for (int t : new int[] {quote, quoteColon}) {
            assertEquals(0, repeat[t >>> 6] & 1L << t, "closing a repeated key");
            assertNotEquals(0, fresh[t >>> 6] & 1L << t, "closing a new key");
        }
    }

    @Test
    void theLongestPrefixOfAClosingTokenIsTheQuote() {
        O200kHarmony tok = O200kHarmony.get();
        int[] closing = tok.encode("\"}"), quote = tok.encode("\"");
        assertEquals(1, closing.length);
        assertEquals(quote[0], TokenMasker.get().prefixes()[closing[0]]);
        assertEquals(-1, TokenMasker.get().prefixes()[quote[0]]);
    }
}
