package io.gossgpu.constrain;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.gossgpu.GossException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * JSON Schema {@code pattern} (with minLength/maxLength) against the networknt validator as the oracle: random
 * documents the matcher writes validate; random and mutated strings are accepted by the matcher exactly when the
 * oracle accepts them; masks equal the slow per-token reference on states inside patterned strings (walked when met,
 * and precomputed with the schema's matcher); patterns
 * outside the subset are refused with one line naming where.
 */
class StringPatternTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Pattern, limits (-1: none), and the characters random strings are drawn from. */
    record Case(String pattern, int min, int max, String alphabet) {
        String schema() {
            StringBuilder s = new StringBuilder("{\"type\":\"string\",\"pattern\":");
            try {
                s.append(JSON.writeValueAsString(pattern));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            if (min >= 0) s.append(",\"minLength\":").append(min);
            if (max >= 0) s.append(",\"maxLength\":").append(max);
            return s.append('}').toString();
        }
    }

    static final List<Case> CASES = List.of(
            new Case("^[A-Z]{3}-\\d{4}$", -1, -1, "ABZ-0159a "),
            new Case("^[a-z]+@[a-z]+\\.(com|org)$", -1, 20, "abz@.comrg-"),
            new Case("^\\+?[0-9]{1,3}( [0-9]{2,4})*$", -1, 16, "+0123 9x"),
            new Case("ab", -1, -1, "abc"),
            new Case("ab", 4, 6, "abc"),
            new Case("^(yes|no|maybe)$", -1, -1, "yesnomab"),
            new Case("^[^\\s\"]+$", 2, 8, "a \"\\\té😀-"),
            new Case("^.{2,5}$", -1, -1, "ab\n\"\\é😀"),
            new Case("x$|^y", -1, 10, "xyz"),
            new Case("^(?:\\w+\\s?)+$", -1, 12, "ab_9 \t-"),
            new Case("^[\\u00e0-\\u00ff]*[😀-😂]?$", 1, -1, "àéÿa😀😁😃"),
            new Case("^a*?b+?c??$", -1, -1, "abc"),
            new Case("^\\d{2}(\\.\\d+)?$", -1, 8, "0123.x"),
            new Case("^[\\\\\"/]+$", -1, 6, "\\\"/a"),
            new Case("", 2, 3, "ab😀\""),
            new Case("^(ab|c)$", 2, -1, "abc"), // 'c' alone is under minLength: it must never be begun
            new Case("^(abc|d+)$", -1, 2, "abcd")); // 'abc' is over maxLength: 'a' must never be begun

    /**
     * A document written by choosing random bytes the matcher allows, mostly bytes of the case's alphabet (so that
     * unanchored patterns meet their match), closing the string once it may close after 30 bytes.
     */
    static String randomDocument(JsonGrammar g, Case c, SplittableRandom rnd) {
        java.util.Set<Integer> alphabet = new java.util.HashSet<>();
        for (byte b : c.alphabet().getBytes(StandardCharsets.UTF_8)) alphabet.add(b & 0xff);
        Object state = JsonMachine.start(g);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int len = 0; ; len++) {
            if (len > 4000) fail("no end after 4000 bytes: " + out);
            boolean canEnd = JsonMachine.canEnd(state);
            if (canEnd && rnd.nextInt(4) == 0) break;
            java.util.List<Integer> options = new java.util.ArrayList<>(), preferred = new java.util.ArrayList<>();
            for (int b = 0; b < 256; b++)
                if (JsonMachine.step(state, b) != null) {
                    options.add(b);
                    if (alphabet.contains(b)) preferred.add(b);
                }
            if (options.isEmpty()) {
                assertTrue(canEnd, () -> "dead end after " + out);
                break;
            }
            List<Integer> from = !preferred.isEmpty() && rnd.nextInt(5) > 0 ? preferred : options;
            int b = len > 30 && options.contains((int) '"') ? '"' : from.get(rnd.nextInt(from.size()));
            out.write(b);
            state = JsonMachine.step(state, b);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static boolean accepts(JsonGrammar g, String doc) {
        Object s = JsonMachine.step(JsonMachine.start(g), doc.getBytes(StandardCharsets.UTF_8));
        return s != null && JsonMachine.canEnd(s);
    }

    @Test
    void randomDocumentsValidate() {
        SplittableRandom rnd = new SplittableRandom(40);
        for (Case c : CASES) {
            String schema = c.schema();
            JsonGrammar g = SchemaCompiler.compile(schema);
            for (int i = 0; i < 60; i++) {
                String doc = randomDocument(g, c, rnd);
                List<String> v = TestSchemas.violations(schema, doc);
                assertTrue(v.isEmpty(), () -> doc + " under " + schema + ": " + v);
            }
        }
    }

    /** Strings drawn from each case's alphabet, and mutations of strings the matcher writes: the matcher agrees with the oracle. */
    @Test
    void theMatcherAcceptsExactlyWhatTheOracleAccepts() throws Exception {
        SplittableRandom rnd = new SplittableRandom(41);
        for (Case c : CASES) {
            String schema = c.schema();
            JsonGrammar g = SchemaCompiler.compile(schema);
            int[] alpha = c.alphabet().codePoints().toArray();
            int valid = 0, invalid = 0;
            for (int i = 0; i < 400; i++) {
                String text;
                if (i % 4 == 0) {
                    StringBuilder sb = new StringBuilder();
                    for (int n = rnd.nextInt(12); n > 0; n--) sb.appendCodePoint(alpha[rnd.nextInt(alpha.length)]);
                    text = sb.toString();
                } else if (i % 4 == 1) {
                    text = JSON.readValue(randomDocument(g, c, rnd), String.class);
                } else {
                    int[] cps = JSON.readValue(randomDocument(g, c, rnd), String.class)
                            .codePoints()
                            .toArray();
                    StringBuilder sb = new StringBuilder();
                    int at = cps.length == 0 ? -1 : rnd.nextInt(cps.length);
                    for (int k = 0; k < cps.length; k++) {
                        if (k != at) sb.appendCodePoint(cps[k]);
                        else if (rnd.nextBoolean()) sb.appendCodePoint(alpha[rnd.nextInt(alpha.length)]);
                    }
                    if (rnd.nextInt(4) == 0) sb.appendCodePoint(alpha[rnd.nextInt(alpha.length)]);
                    text = sb.toString();
                }
                String doc = JSON.writeValueAsString(text);
                boolean want = TestSchemas.violations(schema, doc).isEmpty();
                assertEquals(want, accepts(g, doc), () -> c.pattern() + ": " + doc + " (oracle says " + want + ")");
                if (want) valid++;
                else invalid++;
            }
            assertTrue(valid >= 50 && invalid >= 20, c.pattern() + ": valid " + valid + ", invalid " + invalid);
        }
    }

    @Test
    void masksMatchTheReferenceInsidePatternedStrings() {
        SplittableRandom rnd = new SplittableRandom(42);
        int states = 0;
        for (Case c : CASES) {
            String schema = "{\"type\":\"object\",\"properties\":{\"s\":" + c.schema()
                    + "},\"required\":[\"s\"],\"additionalProperties\":false}";
            JsonGrammar g = SchemaCompiler.compile(schema);
            // the same schema with its pattern masks precomputed, as a request's matcher has them
            JsonGrammar prepared = SchemaCompiler.compile(schema);
            ByteMatcher.json(prepared);
            for (int i = 0; i < 3; i++) {
                byte[] doc = randomDocument(g, c, rnd).getBytes(StandardCharsets.UTF_8);
                for (int k = 0; k < 3; k++) {
                    int cut = rnd.nextInt(doc.length + 1);
                    String where = new String(doc, 0, cut, StandardCharsets.UTF_8);
                    TokenMaskerTest.assertSameMask(
                            JsonMachine.step(JsonMachine.start(g), java.util.Arrays.copyOf(doc, cut)), where);
                    TokenMaskerTest.assertSameMask(
                            JsonMachine.step(JsonMachine.start(prepared), java.util.Arrays.copyOf(doc, cut)),
                            where + " (prepared)");
                    states++;
                }
            }
        }
        assertTrue(states >= 100, "states " + states);
    }

    /** One patterned string in two places: the masker's per-frame cache serves both, and each mask still matches the reference. */
    @Test
    void theMaskCacheServesAFrameInAnyContext() {
        JsonGrammar g = SchemaCompiler.compile("""
                {"$defs":{"w":{"type":"string","pattern":"^[a-z]+( [a-z]+)?$"}},"type":"object",
                 "properties":{"a":{"$ref":"#/$defs/w"},"b":{"type":"array","items":{"$ref":"#/$defs/w"}}},
                 "required":["a","b"],"additionalProperties":false}""");
        for (String prefix : List.of("{\"a\":\"ab", "{\"a\":\"x\",\"b\":[\"ab", "{\"a\":\"x y\",\"b\":[\"q\",\"ab"))
            TokenMaskerTest.assertSameMask(
                    JsonMachine.step(JsonMachine.start(g), prefix.getBytes(StandardCharsets.UTF_8)), prefix);
    }

    /** The automaton is minimal (fewer states: fewer frames whose masks a schema's matcher precomputes). */
    @Test
    void theAutomatonIsMinimal() {
        assertEquals(
                3,
                StringPattern.compile("ok", 0, Integer.MAX_VALUE, "t").states(),
                "anything, an o, then anything after ok");
        assertEquals(
                1,
                StringPattern.compile("^(a|b|ab|ba)*$", 0, Integer.MAX_VALUE, "t")
                        .states(),
                "any string of a and b: one state");
        assertEquals(
                4,
                StringPattern.compile("^[0-9]{3}$", 0, Integer.MAX_VALUE, "t").states());
    }

    @Test
    void lengthsCountCodePointsAndThePatternTogether() {
        JsonGrammar g = SchemaCompiler.compile(new Case("^[a-z😀]*$", 2, 3, "").schema());
        assertTrue(accepts(g, "\"a😀\""));
        assertTrue(accepts(g, "\"😀😀😀\""));
        assertFalse(accepts(g, "\"😀\""), "minLength 2 counts code points, not UTF-16 units");
        assertFalse(accepts(g, "\"😀😀😀😀\""));
        assertFalse(accepts(g, "\"a\\u0062\""), "no \\u escapes inside a patterned string");
        // a pattern that needs 4 characters cannot fit in maxLength 3: the schema is refused, not a dead end in a reply
        GossException e =
                assertThrows(GossException.class, () -> SchemaCompiler.compile(new Case("^a{4}$", -1, 3, "").schema()));
        assertTrue(e.getMessage().contains("allows no string"), e.getMessage());
    }

    @Test
    void patternsOutsideTheSubsetAreRefusedWithOneLine() {
        for (String bad : List.of(
                "a(?=b)", "(?!x)", "(?<=a)b", "(?i)abc", "(a)\\1", "\\bword", "\\p{L}+", "a^b", "a$b", "(a", "a)",
                "[a-", "[]", "a{2", "a{3,1}", "*a", "a**", "[a[b]]", "[a&&b]", "\\Aabc", "a{2000}", "\\q")) {
            String schema =
                    "{\"type\":\"object\",\"properties\":{\"s\":{\"type\":\"string\",\"pattern\":" + quote(bad) + "}}}";
            GossException e = assertThrows(GossException.class, () -> SchemaCompiler.compile(schema), bad);
            assertTrue(
                    e.getMessage().startsWith("the JSON schema's pattern at #/properties/s "),
                    bad + ": " + e.getMessage());
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
        }
        GossException e =
                assertThrows(GossException.class, () -> SchemaCompiler.compile("{\"type\":\"string\",\"pattern\":5}"));
        assertEquals("the JSON schema's pattern at # must be a string", e.getMessage());
    }

    private static String quote(String s) {
        try {
            return JSON.writeValueAsString(s);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
