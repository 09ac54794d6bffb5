package io.gossgpu.constrain;

import static org.junit.jupiter.api.Assertions.*;

import io.gossgpu.GossException;
import io.gossgpu.tokenizer.O200kHarmony;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * GBNF grammars ({@link TestGrammars}) against their independent oracles: texts the machine writes byte by byte and
 * token by token (through the real {@link TokenMasker} over the whole vocabulary) are accepted by the oracle;
 * mutated texts are accepted by the machine exactly when the oracle accepts them; the masker's walk equals trying
 * every token; the mask is never empty while the grammar can go on; bad grammars fail with one-line errors.
 */
class GbnfMachineTest {
    private static final O200kHarmony TOK = O200kHarmony.get();

    static boolean accepts(GbnfMachine m, String text) {
        Object s = m.step(m.start(), text.getBytes(StandardCharsets.UTF_8));
        return s != null && m.canEnd(s);
    }

    /** A random text of the grammar, chosen byte by byte among the bytes the machine takes (null if it ran long). */
    static byte[] randomText(GbnfMachine m, SplittableRandom rnd, int maxBytes) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Object s = m.start();
        while (out.size() < maxBytes) {
            List<Integer> next = new ArrayList<>();
            for (int b = 0; b < 256; b++) if (m.step(s, b) != null) next.add(b);
            if (m.canEnd(s) && (next.isEmpty() || rnd.nextInt(4) == 0)) return out.toByteArray();
            assertFalse(next.isEmpty(), "a live state that can neither go on nor end");
            int b = next.get(rnd.nextInt(next.size()));
            out.write(b);
            s = m.step(s, b);
        }
        return null;
    }

    @Test
    void thereAreTwentyGrammarsAndAllCompile() {
        assertTrue(TestGrammars.ALL.size() >= 20, "grammars: " + TestGrammars.ALL.size());
        for (TestGrammars.Case c : TestGrammars.ALL)
            assertNotNull(GbnfGrammar.compile(c.gbnf()).machine(), c.name());
    }

    @Test
    void byteWalksAreAcceptedAndMutationsAgreeWithTheOracle() {
        SplittableRandom rnd = new SplittableRandom(40);
        for (TestGrammars.Case c : TestGrammars.ALL) {
            GbnfMachine m = GbnfGrammar.compile(c.gbnf()).machine();
            int texts = 0, mutantsAccepted = 0, mutantsRefused = 0;
            for (int i = 0; i < 150; i++) {
                byte[] b = randomText(m, rnd, 120);
                if (b == null) continue;
                String text = new String(b, StandardCharsets.UTF_8);
                assertTrue(
                        c.oracle().test(text),
                        () -> c.name() + ": the machine wrote '" + text + "', which the oracle refuses");
                texts++;
                for (int k = 0; k < 4; k++) {
                    String mutant = mutate(text, c.alphabet(), rnd);
                    boolean want = c.oracle().test(mutant);
                    assertEquals(
                            want, accepts(m, mutant), () -> c.name() + ": '" + mutant + "' (oracle says " + want + ")");
                    if (want) mutantsAccepted++;
                    else mutantsRefused++;
                }
            }
            assertTrue(texts >= 50, c.name() + ": texts " + texts);
            assertTrue(mutantsRefused > 20, c.name() + ": refused mutants " + mutantsRefused);
        }
    }

    private static String mutate(String text, String alphabet, SplittableRandom rnd) {
        int[] cps = text.codePoints().toArray();
        int[] alpha = alphabet.codePoints().toArray();
        List<Integer> out = new ArrayList<>();
        for (int cp : cps) out.add(cp);
        int edits = 1 + rnd.nextInt(2);
        for (int e = 0; e < edits; e++) {
            int op = rnd.nextInt(3), at = rnd.nextInt(out.size() + 1);
            int cp = alpha[rnd.nextInt(alpha.length)];
            if (op == 0 || out.isEmpty()) out.add(at, cp);
            else if (op == 1) out.remove(Math.min(at, out.size() - 1));
            else out.set(Math.min(at, out.size() - 1), cp);
        }
        StringBuilder sb = new StringBuilder();
        for (int cp : out) sb.appendCodePoint(cp);
        return sb.toString();
    }

    /** Texts written token by token from the real masks (uniformly among allowed tokens): the oracle accepts every one. */
    @Test
    void tokenWalksOverTheWholeVocabularyAreAccepted() {
        TokenMasker masker = TokenMasker.get();
        SplittableRandom rnd = new SplittableRandom(7);
        int finished = 0, walks = 0;
        for (TestGrammars.Case c : TestGrammars.ALL) {
            GbnfMachine m = GbnfGrammar.compile(c.gbnf()).machine();
            for (int w = 0; w < 3; w++) {
                walks++;
                Object s = m.start();
                StringBuilder bytes = new StringBuilder();
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                for (int step = 0; step < 60; step++) {
                    long[] mask = new long[masker.words()];
                    m.allowed(masker, s, mask);
                    List<Integer> ids = new ArrayList<>();
                    for (int id = 0; id < O200kHarmony.NUM_RANKS; id++)
                        if ((mask[id >>> 6] >>> id & 1) != 0) ids.add(id);
                    boolean canGoOn = false;
                    for (int b = 0; b < 256 && !canGoOn; b++) canGoOn = m.step(s, b) != null;
                    assertEquals(
                            canGoOn,
                            !ids.isEmpty(),
                            c.name() + ": mask after '" + out + "' hides every token but the grammar goes on");
                    if (m.canEnd(s) && (ids.isEmpty() || rnd.nextInt(3) == 0)) {
                        String text = out.toString(StandardCharsets.UTF_8);
                        assertTrue(c.oracle().test(text), () -> c.name() + ": token walk wrote '" + text + "'");
                        finished++;
                        break;
                    }
                    int id = ids.get(rnd.nextInt(ids.size()));
                    byte[] t = TOK.tokenBytes(id);
                    out.writeBytes(t);
                    s = m.step(s, t);
                    assertNotNull(s, c.name() + ": an allowed token killed the state");
                }
            }
        }
        assertTrue(finished >= walks * 2 / 3, "finished " + finished + " of " + walks);
    }

    /** The trie walk's mask equals trying every token's bytes on the machine, at random states of every grammar. */
    @Test
    void masksMatchTheSlowReference() {
        TokenMasker masker = TokenMasker.get();
        SplittableRandom rnd = new SplittableRandom(3);
        for (TestGrammars.Case c : TestGrammars.ALL) {
            GbnfMachine m = GbnfGrammar.compile(c.gbnf()).machine();
            byte[] text;
            do text = randomText(m, rnd, 120);
            while (text == null);
            int cut = rnd.nextInt(text.length + 1);
            Object s = m.start();
            for (int j = 0; j < cut; j++) s = m.step(s, text[j] & 0xff);
            long[] fast = new long[masker.words()], slow = new long[masker.words()];
            m.allowed(masker, s, fast);
            for (int id = 0; id < O200kHarmony.NUM_RANKS; id++)
                if (m.step(s, TOK.tokenBytes(id)) != null) slow[id >>> 6] |= 1L << id;
            assertArrayEquals(slow, fast, c.name() + " after " + cut + " bytes");
        }
    }

    /** The benchmark's key=value grammar: a loop over any character but two, bounded, inside a bounded repetition. */
    static final String KEY_VALUE = """
            root ::= pair ("\\n" pair){0,7}
            pair ::= [a-z_]{1,16} "=" ([0-9]{1,8} | "\\"" [^"\\n]{0,40} "\\"")
            """;

    /**
     * Partial characters merged when their bits cannot matter give the same masks as the exact machine that keeps
     * every partial character's bits (each token's bytes tried on it), at random states of every grammar.
     */
    @Test
    void mergedPartialCharactersMaskAsTheExactMachine() {
        TokenMasker masker = TokenMasker.get();
        SplittableRandom rnd = new SplittableRandom(11);
        List<String> grammars = new ArrayList<>();
        for (TestGrammars.Case c : TestGrammars.ALL) grammars.add(c.gbnf());
        grammars.add(KEY_VALUE);
        for (String gbnf : grammars) {
            GbnfGrammar g = GbnfGrammar.compile(gbnf);
            GbnfMachine merged = new GbnfMachine(g, true, GbnfMachine.MAX_MASKS),
                    exact = new GbnfMachine(g, false, GbnfMachine.MAX_MASKS);
            for (int k = 0; k < 2; k++) {
                byte[] text;
                do text = randomText(exact, rnd, 120);
                while (text == null);
                int cut = rnd.nextInt(text.length + 1);
                Object fastState = merged.step(merged.start(), java.util.Arrays.copyOf(text, cut));
                Object slowState = exact.step(exact.start(), java.util.Arrays.copyOf(text, cut));
                assertNotNull(fastState, gbnf + ": the merged machine refused a text the exact one wrote");
                long[] fast = new long[masker.words()], slow = new long[masker.words()];
                merged.allowed(masker, fastState, fast);
                for (int id = 0; id < O200kHarmony.NUM_RANKS; id++)
                    if (exact.step(slowState, TOK.tokenBytes(id)) != null) slow[id >>> 6] |= 1L << id;
                assertArrayEquals(slow, fast, gbnf + " after " + cut + " bytes");
            }
        }
    }

    /**
     * A reply's states all keep their mask (so a repeated state costs a copy, not a walk over the vocabulary): the
     * partial characters of the vocabulary's CJK and emoji prefixes must not fill the intern table, as they did
     * when each lead/continuation byte made a state of its own.
     */
    @Test
    void keyValueRepliesKeepEveryMask() {
        TokenMasker masker = TokenMasker.get();
        GbnfMachine m = GbnfGrammar.compile(KEY_VALUE).machine();
        SplittableRandom rnd = new SplittableRandom(1);
        List<Object> seen = new ArrayList<>();
        for (int doc = 0; doc < 4; doc++) {
            Object s = m.start();
            for (int n = 0; n < 60; n++) {
                long[] mask = new long[masker.words()];
                m.allowed(masker, s, mask);
                seen.add(s);
                List<Integer> ids = new ArrayList<>();
                for (int id = 0; id < O200kHarmony.NUM_RANKS; id++) if ((mask[id >>> 6] >>> id & 1) != 0) ids.add(id);
                if (ids.isEmpty()) break;
                s = m.step(s, TOK.tokenBytes(ids.get(rnd.nextInt(ids.size()))));
            }
        }
        assertTrue(m.internedStates() < 16_384, "intern table full: " + m.internedStates() + " states");
        for (Object s : seen) assertTrue(m.maskKept(s), "a state of the reply lost its mask");
    }

    /**
     * The per-state mask cache is bounded and evicts the least recently used state: past the bound new states are
     * still cached (it used to stop caching), and a state used again outlives older ones. Masks stay exact.
     */
    @Test
    void maskCacheKeepsTheMostRecentlyUsedStates() {
        TokenMasker masker = TokenMasker.get();
        GbnfMachine m = new GbnfMachine(GbnfGrammar.compile("root ::= [a-z]{0,8}"), true, 4);
        List<Object> s = new ArrayList<>(); // s.get(k): after k letters, each a state of its own
        for (Object at = m.start(); s.size() < 7; at = m.step(at, 'a')) s.add(at);
        long[][] first = new long[7][];
        for (int k = 0; k < 6; k++) {
            first[k] = new long[masker.words()];
            m.allowed(masker, s.get(k), first[k]);
        }
        for (int k = 0; k < 6; k++) assertEquals(k >= 2, m.maskKept(s.get(k)), "after 6 states, state " + k + " kept");
        long[] again = new long[masker.words()];
        m.allowed(masker, s.get(2), again); // 2 is now the most recently used: 3 goes next
        assertArrayEquals(first[2], again);
        m.allowed(masker, s.get(6), new long[masker.words()]);
        assertTrue(m.maskKept(s.get(2)), "a state used again is kept");
        assertFalse(m.maskKept(s.get(3)), "the least recently used state is dropped");
        assertTrue(m.maskKept(s.get(6)), "a new state is cached past the bound");
        for (int k = 0; k < 6; k++) {
            long[] now = new long[masker.words()];
            m.allowed(masker, s.get(k), now);
            assertArrayEquals(first[k], now, "state " + k + " from the cache or walked again");
        }
    }

    @Test
    void partialUtf8IsKeptOnlyWhileACharacterCanComplete() {
        GbnfMachine m = GbnfGrammar.compile("root ::= [\\u4e00-\\u9fff]").machine();
        assertNotNull(m.step(m.start(), 0xE4)); // U+4xxx
        assertNull(m.step(m.start(), 0xE3)); // U+3xxx: below the class
        assertNull(m.step(m.start(), 0xC3)); // two-byte characters are all below the class
        assertNull(m.step(m.start(), 0x80)); // a continuation byte cannot start a character
        assertTrue(accepts(m, "中"));
        GbnfMachine any = GbnfGrammar.compile("root ::= .").machine();
        assertNull(any.step(any.start(), new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80}), "a surrogate");
        assertNull(any.step(any.start(), new byte[] {(byte) 0xC0}), "an overlong lead byte");
        assertNull(any.step(any.start(), new byte[] {(byte) 0xE0, (byte) 0x80}), "overlong three-byte form");
    }

    @Test
    void badGrammarsFailWithOneLineErrors() {
        String[][] cases = {
            {"root ::= item", "1:10: rule 'item' is not defined"},
            {"root ::= \"a\"\nother ::= root2", "2:11: rule 'root2' is not defined"},
            {"item ::= \"a\"", "no rule named 'root'"},
            {"root ::= root \"a\" | \"b\"", "rule 'root' is left-recursive"},
            {"root ::= a\na ::= b \"x\"\nb ::= a | \"y\"", "left-recursive"},
            {"root ::= (\"\")* \"a\"", "left-recursive"},
            {"root ::= \"a\" root", "can never finish"},
            {"root ::= \"abc", "1:10: string is never closed"},
            {"root ::= [a-z", "1:10: character class is never closed"},
            {"root ::= [z-a]", "1:12: range 'z'-'a' is reversed"},
            {"root ::= (\"a\" \"b\"", "1:10: '(' is never closed"},
            {"root ::= \"a\")", "1:13: unexpected ')'"},
            {"root ::= \"a\"{3,1}", "1:13: repetition {3,1} has its maximum below its minimum"},
            {"root ::= \"a\"{5000}", "repetition bound above 1000"},
            {"root ::= \"\\q\"", "1:11: unknown escape '\\q'"},
            {"root ::= \"\\x4\"", "escape needs 2 hex digits"},
            {"root ::= \"a\"\nroot ::= \"b\"", "2:1: rule 'root' is defined twice (first at 1:1)"},
            {"root = \"a\"", "1:6: expected '::=' after rule name 'root'"},
            {"root ::= \"a\" @", "1:14: unexpected '@'"},
            {"root ::= [^\\x00-\\U0010FFFF]", "can never finish"},
            {"root ::= ((\"a\"?){200}){200} \"b\"", "too ambiguous"},
        };
        for (String[] c : cases) {
            GossException e = assertThrows(GossException.class, () -> GbnfGrammar.compile(c[0]), c[0]);
            assertTrue(e.getMessage().contains(c[1]), () -> c[0] + " gave: " + e.getMessage());
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
            assertTrue(e.getMessage().startsWith("grammar"), e.getMessage());
        }
    }

    /** An alternative that can never finish is dropped, so the machine never starts down it. */
    @Test
    void alternativesThatNeverFinishAreDropped() {
        GbnfMachine m = GbnfGrammar.compile("root ::= \"a\" loop | \"b\"\nloop ::= \"x\" loop")
                .machine();
        assertNull(m.step(m.start(), 'a'));
        assertTrue(accepts(m, "b"));
    }
}
