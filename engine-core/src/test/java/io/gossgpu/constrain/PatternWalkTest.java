package io.gossgpu.constrain;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Inside a patterned string with length limits, the masker walks each frame once with the limits ignored and checks
 * the limits on each token's end frame ({@link TokenMasker#insideByCount}); that must take exactly what the exact walk
 * from the frame takes ({@link TokenMasker#insideExact}), at any automaton state, count and partial character. So
 * must the masks precomputed with a schema's matcher ({@link TokenMasker#prepare}), which serve every frame between
 * characters or after a backslash at every count without a walk.
 */
class PatternWalkTest {
    private record Case(String pattern, int min, int max) {}

    private static final List<Case> CASES = List.of(
            new Case("ok", 0, 60), // the benchmark's note: any string containing ok
            new Case("^[a-z]{2,5}-\\d+$", 4, 12), // a bounded part, then a free one
            new Case("^(ab|é€)*x?$", 3, 9), // multi-byte characters and an optional end
            new Case("^[^\"\\\\]*\\n?[a-z\"\\\\]+$", 2, 20), // escapes can be written
            new Case("^[A-Z]", 5, Integer.MAX_VALUE)); // minLength only

    @Test
    void theWalkPerFrameTakesWhatTheExactWalkTakesAtRandomCounts() {
        TokenMasker masker = TokenMasker.get();
        SplittableRandom rnd = new SplittableRandom(5);
        int pairs = 0, nonEmpty = 0;
        for (Case c : CASES) {
            StringPattern p = StringPattern.compile(c.pattern(), c.min(), c.max(), "test");
            JsonGrammar.StringNode node = new JsonGrammar.StringNode(c.min(), c.max(), p);
            int top = c.max() == Integer.MAX_VALUE ? c.min() + 10 : c.max() + 1;
            for (int i = 0; i < 12; i++) {
                int q = rnd.nextInt(p.states());
                JsonMachine.Stack base =
                        new JsonMachine.Stack(new JsonMachine.PatternStr(node, 0, q, 0, 0, 0, false), null);
                // the frame itself, after a backslash, and inside two- and three-byte characters
                for (int lead : new int[] {-1, '\\', 0xc3, 0xe2}) {
                    Object s = lead < 0 ? base : JsonMachine.step(base, lead);
                    if (!(s instanceof JsonMachine.Stack st)) continue;
                    JsonMachine.PatternStr f = (JsonMachine.PatternStr) st.top();
                    for (int k = 0; k < 4; k++) {
                        JsonMachine.Stack at = new JsonMachine.Stack(f.at(rnd.nextInt(top + 1)), null);
                        long[] exact = masker.insideExact(at),
                                byCount = masker.insideByCount((JsonMachine.PatternStr) at.top());
                        assertArrayEquals(exact, byCount, c + " at " + at.top());
                        pairs++;
                        for (long w : exact)
                            if (w != 0) {
                                nonEmpty++;
                                break;
                            }
                    }
                }
            }
        }
        assertTrue(pairs >= 500 && nonEmpty >= 200, "pairs " + pairs + ", with tokens " + nonEmpty);
    }

    @Test
    void precomputedMasksAreTheExactWalkAtEveryFrameAndCount() {
        TokenMasker masker = TokenMasker.get();
        SplittableRandom rnd = new SplittableRandom(7);
        int served = 0, walked = 0;
        for (Case c : CASES) {
            StringPattern p = StringPattern.compile(c.pattern(), c.min(), c.max(), "test");
            JsonGrammar.StringNode node = new JsonGrammar.StringNode(c.min(), c.max(), p);
            masker.prepare(node);
            assertNotNull(p.masks, c + ": nothing precomputed");
            assertTrue(p.masks.frames() > 0 && p.masks.distinct > 0, c + ": " + p.masks.frames() + " frames");
            int top = c.max() == Integer.MAX_VALUE ? c.min() + 10 : c.max();
            for (int q = 0; q < p.states(); q++) {
                JsonMachine.Stack base =
                        new JsonMachine.Stack(new JsonMachine.PatternStr(node, 0, q, 0, 0, 0, false), null);
                // between characters, after a backslash, and inside two-, three- and four-byte characters (one byte
                // short of whole: put together from the continuation walks; more: walked)
                for (byte[] lead : new byte[][] {
                    {},
                    {'\\'},
                    {(byte) 0xc3},
                    {(byte) 0xe2},
                    {(byte) 0xe2, (byte) 0x82},
                    {(byte) 0xe4, (byte) 0xb8},
                    {(byte) 0xf0, (byte) 0x9f, (byte) 0x98}
                }) {
                    Object s = JsonMachine.step(base, lead);
                    if (!(s instanceof JsonMachine.Stack st)) continue;
                    JsonMachine.PatternStr f = (JsonMachine.PatternStr) st.top();
                    for (int k = 0; k < 3; k++) {
                        int count = k == 0 ? 0 : k == 1 ? top : rnd.nextInt(top + 1);
                        JsonMachine.PatternStr at = f.at(count);
                        boolean pre = p.masks.get(at.frame(), count) != null;
                        if (pre) served++;
                        else walked++;
                        boolean between = lead.length == 0 || lead[0] == '\\'; // a whole character or a backslash read
                        assertEquals(
                                between && PatternFrames.completable(p.unlimited(), 0, at.frame()),
                                pre,
                                c + ": precomputed at " + at);
                        assertArrayEquals(
                                masker.insideExact(new JsonMachine.Stack(at, null)),
                                masker.inside(at),
                                c + " at " + at);
                    }
                }
            }
        }
        assertTrue(served >= 50 && walked >= 20, "served " + served + ", walked " + walked);
    }
    /**
     * The masker's caches of patterned-string frames (masks by frame and count, walks by frame) keep the most
     * recently used entries when full instead of starting over (which made a reply that cycles through more frames
     * than fit walk the vocabulary again for each, even for the frame it had just used); what they serve is the exact
     * walk's mask either way.
     */
    @Test
    void patternCachesKeepTheMostRecentlyUsedFrames() {
        TokenMasker masker = new TokenMasker(io.gossgpu.tokenizer.O200kHarmony.get(), 3, 2);
        StringPattern p = StringPattern.compile("^[a-z]{2,5}-\\d+$", 4, 12, "test");
        JsonGrammar.StringNode node = new JsonGrammar.StringNode(4, 12, p); // not prepared: every frame is walked
        assertTrue(p.states() >= 4, "automaton states: " + p.states());
        JsonMachine.PatternStr[] f = new JsonMachine.PatternStr[4];
        for (int q = 0; q < 4; q++) f[q] = new JsonMachine.PatternStr(node, 0, q, 0, 0, 0, false).at(2);
        long[][] exact = new long[4][];
        for (int q = 0; q < 4; q++) exact[q] = masker.insideExact(new JsonMachine.Stack(f[q], null));

        // walks, two kept: f0, f1, f0 again, then f2 drops f1 (the least recently used), not f0
        for (int q : new int[] {0, 1, 0, 2})
            assertArrayEquals(exact[q], masker.insideByCount(f[q]), "walk of frame " + q);
        assertTrue(masker.walkKept(f[0]), "the walk used again is kept");
        assertFalse(masker.walkKept(f[1]), "the least recently used walk is dropped");
        assertTrue(masker.walkKept(f[2]), "the new walk is kept");

        // masks, three kept: f0, f1, f2, f0 again, then f3 drops f1
        for (int q : new int[] {0, 1, 2, 0, 3}) assertArrayEquals(exact[q], masker.inside(f[q]), "mask of frame " + q);
        assertTrue(masker.insideKept(f[0]), "the mask used again is kept");
        assertFalse(masker.insideKept(f[1]), "the least recently used mask is dropped");
        assertTrue(masker.insideKept(f[2]) && masker.insideKept(f[3]), "the other masks are kept");
        for (int q = 0; q < 4; q++)
            assertArrayEquals(exact[q], masker.inside(f[q]), "frame " + q + " from the cache or walked again");
    }
}
