package io.gossgpu.constrain;

import static org.junit.jupiter.api.Assertions.*;

import io.gossgpu.GossException;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The byte matcher on hand-picked documents, and on random documents it writes, checked by a JSON Schema validator. */
class JsonMachineTest {
    private static boolean accepts(String schema, String doc) {
        Object s = JsonMachine.step(
                JsonMachine.start(SchemaCompiler.compile(schema)), doc.getBytes(StandardCharsets.UTF_8));
        return s != null && JsonMachine.canEnd(s);
    }

    @Test
    void acceptsAndRejectsHandPickedDocuments() {
        String person = TestSchemas.ALL.get(0);
        assertTrue(accepts(person, "{\"name\":\"Ann\",\"age\":42}"));
        assertTrue(accepts(person, "{ \"name\" : \"A\\\"n\\u00e9\" ,\n \"age\": -0 }"));
        assertFalse(accepts(person, "{\"age\":42,\"name\":\"Ann\"}"), "declared order");
        assertFalse(accepts(person, "{\"name\":\"Ann\"}"), "age is required");
        assertFalse(accepts(person, "{\"name\":\"Ann\",\"age\":4.5}"), "integer");
        assertFalse(accepts(person, "{\"name\":\"Ann\",\"age\":42,\"x\":1}"), "no extra keys");
        assertFalse(accepts(person, "{\"name\":\"A\nn\",\"age\":1}"), "raw control character in a string");
        assertFalse(accepts(person, "{\"name\":\"Ann\",\"age\":042}"), "leading zero");
        assertFalse(accepts(person, "{\"name\":\"Ann\",\"age\":42"), "unfinished");
        String weather = TestSchemas.ALL.get(1);
        assertTrue(accepts(weather, "{\"city\":\"Oslo\",\"temperature\":-1.5e3,\"unit\":\"celsius\"}"));
        assertFalse(accepts(weather, "{\"city\":\"Oslo\",\"temperature\":1,\"unit\":\"kelvin\"}"));
        assertFalse(accepts(weather, "{\"city\":\"Oslo\",\"temperature\":1.,\"unit\":\"celsius\"}"));
        String code = TestSchemas.ALL.get(6);
        assertTrue(accepts(code, "{\"code\":\"abé\",\"flag\":\"on\"}"));
        assertFalse(accepts(code, "{\"code\":\"ab\",\"flag\":\"on\"}"), "minLength 3");
        assertFalse(accepts(code, "{\"code\":\"abcdef\",\"flag\":\"on\"}"), "maxLength 5");
        String anyOf = TestSchemas.ALL.get(3);
        assertTrue(accepts(anyOf, "{\"answer\":null}"));
        assertTrue(accepts(anyOf, "{\"answer\":{\"x\":1}}"));
        assertFalse(accepts(anyOf, "{\"answer\":1}"));
        String tree = TestSchemas.ALL.get(4);
        assertTrue(accepts(tree, "{\"root\":{\"value\":1,\"children\":[{\"value\":2,\"children\":[]}]}}"));
        assertFalse(accepts(tree, "{\"root\":{\"value\":1,\"children\":[{\"value\":2}]}}"));
        String enums = TestSchemas.ALL.get(7);
        assertTrue(accepts(enums, "[1,12,{\"k\":[1]}]"));
        assertFalse(accepts(enums, "[1,2]"));
        assertFalse(accepts(enums, "[1]"), "minItems 2");
        assertTrue(accepts(TestSchemas.ALL.get(12), "{\"a\":[1,{\"b\":null}],\"c\":\"d\"}"));
        assertFalse(accepts(TestSchemas.ALL.get(12), "[1]"));
        String optional = TestSchemas.ALL.get(13);
        assertTrue(accepts(optional, "{\"req\":true}"));
        assertTrue(accepts(optional, "{\"opt2\":\"s\",\"req\":false,\"opt3\":2}"));
        assertFalse(accepts(optional, "{\"opt1\":1}"));
        assertFalse(accepts(optional, "{\"req\":true,}"));
    }

    /** JSON Schema counts code points: a surrogate pair written as two escapes is one; a lone surrogate is no character. */
    @Test
    void surrogatePairEscapesCountAsOneCodePoint() {
        String two = "{\"type\":\"string\",\"minLength\":2}", one = "{\"type\":\"string\",\"maxLength\":1}";
        String pair = "\"\\ud83d\\uDE00\"";
        assertFalse(accepts(two, pair), "one code point is under minLength 2");
        assertEquals(1, TestSchemas.violations(two, pair).size(), "the oracle agrees");
        assertTrue(accepts(one, pair));
        assertTrue(accepts(two, "\"\\uD83D\\ude00x\""));
        assertTrue(TestSchemas.violations(two, "\"\\uD83D\\ude00x\"").isEmpty());
        assertFalse(accepts(one, "\"\\ud83dx\""), "a high surrogate alone");
        assertFalse(accepts(one, "\"\\ude00\""), "a low surrogate alone");
        assertFalse(accepts(one, "\"\\ud83d\\ud83d\""), "two high surrogates");
        assertTrue(accepts(one, "\"\\ud7ff\""), "the last code point below the surrogates");
        assertTrue(accepts(one, "\"\\ue000\""), "the first above them");
    }

    @Test
    void refusesInvalidUtf8InsideStrings() {
        Object s = JsonMachine.step(
                JsonMachine.start(SchemaCompiler.compile(TestSchemas.ALL.get(0))), "{\"name\":\"".getBytes());
        assertNull(JsonMachine.step(s, 0x80), "a continuation byte without a lead byte");
        assertNull(JsonMachine.step(JsonMachine.step(s, 0xc3), 'a'), "a lead byte without its continuation");
        assertNotNull(JsonMachine.step(JsonMachine.step(s, 0xc3), 0xa9));
    }

    @Test
    void refusesKeywordsItCannotHonour() {
        for (String bad : List.of(
                "{\"type\":\"string\",\"pattern\":\"a(?=b)\"}",
                "{\"type\":\"integer\",\"minimum\":3}",
                "{\"oneOf\":[{\"type\":\"string\"}]}",
                "{\"$ref\":\"#/$defs/missing\"}",
                "{\"type\":\"strin\"}",
                "{")) assertThrows(GossException.class, () -> SchemaCompiler.compile(bad), bad);
    }

    /** Every schema: random documents the matcher lets through all validate, and no live state is a dead end. */
    @Test
    void randomDocumentsValidate() {
        SplittableRandom rnd = new SplittableRandom(7);
        int checked = 0;
        for (String schema : TestSchemas.ALL) {
            JsonGrammar g = SchemaCompiler.compile(schema);
            for (int i = 0; i < 40; i++) {
                String doc = randomDocument(g, rnd);
                List<String> v = TestSchemas.violations(schema, doc);
                assertTrue(v.isEmpty(), () -> doc + " under " + schema + ": " + v);
                checked++;
            }
        }
        assertEquals(TestSchemas.ALL.size() * 40, checked);
    }

    /** A document written by choosing random bytes the matcher allows (closing ones once it grows long). */
    static String randomDocument(JsonGrammar g, SplittableRandom rnd) {
        Object state = JsonMachine.start(g);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int len = 0; ; len++) {
            if (len > 4000) fail("no end after 4000 bytes: " + out);
            boolean canEnd = JsonMachine.canEnd(state);
            if (canEnd && rnd.nextInt(4) == 0) break;
            List<Integer> options = new ArrayList<>();
            for (int b = 0; b < 256; b++) if (JsonMachine.step(state, b) != null) options.add(b);
            if (options.isEmpty()) {
                assertTrue(canEnd, () -> "dead end after " + out);
                break;
            }
            int b = options.get(rnd.nextInt(options.size()));
            if (len > 60) // prefer what closes: quotes, brackets, then anything but whitespace and openers
            for (int pref : new int[] {'"', '}', ']', '0', 'n', 't'})
                    if (options.contains(pref)) {
                        b = pref;
                        break;
                    }
            if (JsonMachine.isWs(b) && rnd.nextInt(3) > 0 && options.size() > 3)
                b = options.get(rnd.nextInt(options.size()));
            out.write(b);
            state = JsonMachine.step(state, b);
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
