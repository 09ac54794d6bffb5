package io.gossgpu.constrain;

import static org.junit.jupiter.api.Assertions.*;

import io.gossgpu.tokenizer.O200kHarmony;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The trie walk's masks against a slow reference: every token's bytes tried on the matcher one by one. */
class TokenMaskerTest {
    private static final O200kHarmony TOK = O200kHarmony.get();

    private static long[] reference(Object state) {
        long[] mask = new long[TokenMasker.get().words()];
        for (int id = 0; id < O200kHarmony.NUM_RANKS; id++)
            if (JsonMachine.step(state, TOK.tokenBytes(id)) != null) mask[id >>> 6] |= 1L << id;
        return mask;
    }

    static void assertSameMask(Object state, String where) {
        long[] fast = TokenMasker.get().allowed(state), slow = reference(state);
        for (int w = 0; w < slow.length; w++) {
            if (fast[w] == slow[w]) continue;
            int id = w * 64 + Long.numberOfTrailingZeros(fast[w] ^ slow[w]);
            fail("after " + where + ": token " + id + " '" + new String(TOK.tokenBytes(id), StandardCharsets.UTF_8)
                    + "' is " + ((slow[w] >>> (id & 63) & 1) == 1 ? "allowed" : "refused")
                    + " by the reference but not by the walk");
        }
    }

    @Test
    void masksMatchTheReferenceOnRandomStates() {
        SplittableRandom rnd = new SplittableRandom(11);
        int states = 0;
        for (String schema : TestSchemas.ALL) {
            JsonGrammar g = SchemaCompiler.compile(schema);
            for (int i = 0; i < 2; i++) {
                byte[] doc = JsonMachineTest.randomDocument(g, rnd).getBytes(StandardCharsets.UTF_8);
                // three cut points along the document: the state after each prefix
                for (int k = 0; k < 3; k++) {
                    int cut = rnd.nextInt(doc.length + 1);
                    Object s = JsonMachine.start(g);
                    for (int j = 0; j < cut; j++) s = JsonMachine.step(s, doc[j] & 0xff);
                    assertSameMask(s, new String(doc, 0, cut, StandardCharsets.UTF_8));
                    states++;
                }
            }
        }
        assertTrue(states >= 80, "states checked: " + states);
    }

    /** Strings with length limits, at every count from empty to full (the walk checks counts token by token there). */
    @Test
    void limitedStringsMatchTheReferenceAtEveryCount() {
        JsonGrammar code = SchemaCompiler.compile(TestSchemas.ALL.get(6)); // minLength 3, maxLength 5
        for (String inside : new String[] {"", "a", "\\n", "ab", "é\\u0041", "abc", "abcd", "ab\\\"cd"}) {
            String prefix = "{\"code\":\"" + inside;
            assertSameMask(JsonMachine.step(JsonMachine.start(code), prefix.getBytes(StandardCharsets.UTF_8)), prefix);
        }
        // strings of at most 40 characters in an array in an array of objects
        JsonGrammar tags = SchemaCompiler.compile(TestSchemas.bounded(TestSchemas.ALL.get(2)));
        for (int n = 0; n <= 40; n += 8) {
            String prefix = "{\"items\":[{\"id\":1,\"tags\":[\"" + "x".repeat(n);
            assertSameMask(JsonMachine.step(JsonMachine.start(tags), prefix.getBytes(StandardCharsets.UTF_8)), prefix);
        }
    }

    @Test
    void insideAStringNearlyEverythingIsAllowedAndQuotesCloseIt() {
        JsonGrammar g = SchemaCompiler.compile(TestSchemas.ALL.get(0));
        Object s = JsonMachine.step(JsonMachine.start(g), "{\"name\":\"".getBytes());
        long[] mask = TokenMasker.get().allowed(s);
        int allowed = 0;
        for (long w : mask) allowed += Long.bitCount(w);
        assertTrue(allowed > 150_000, "allowed inside a free string: " + allowed);
        assertTrue(isSet(mask, TOK.rankOf("\",\"".getBytes())), "\",\" closes the name and opens the next key");
        assertFalse(isSet(mask, TOK.rankOf("\"}".getBytes())), "age is still required");
        assertFalse(isSet(mask, TOK.rankOf("\n".getBytes())), "no raw newline inside a string");
    }

    private static boolean isSet(long[] mask, int id) {
        return (mask[id >>> 6] >>> (id & 63) & 1) == 1;
    }
}
