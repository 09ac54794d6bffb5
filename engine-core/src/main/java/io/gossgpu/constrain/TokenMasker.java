package io.gossgpu.constrain;

import io.gossgpu.tokenizer.O200kHarmony;

/**
 * Which ordinary tokens of the o200k vocabulary a {@link JsonMachine} state can take next, as a bitset (bit {@code id}
 * of word {@code id >>> 6}). The tokens' bytes form a {@link TokenTrie}; a walk steps the matcher along it and drops
 * a whole subtree at the first byte the matcher refuses. Inside a string (the one state where nearly every token
 * fits) the tokens that are plain text on their own (whole UTF-8 characters, no quote, backslash or control byte)
 * come from precomputed sets by length; the others are grouped by what follows their plain prefix, and only those
 * distinct tails are walked (then checked against the string's length limits token by token). Built once (about a second) and shared;
 * thread-safe.
 */
public final class TokenMasker {
    private static volatile TokenMasker instance;
    /** Steps JsonMachine states for the JSON walks (any grammar's states: the matcher's start() is never used here). */
    private static final ByteMatcher JSON_STEPS = ByteMatcher.json(null);

    private final int words;
    private final TokenTrie all;
    /**
     * The tokens without a quote byte and those with one: inside a patterned string the first never leave the
     * string, so what they allow depends on the string's frame alone and is cached by frame ({@link #insidePattern});
     * the second are walked from the whole state each time.
     */
    private final TokenTrie unquoted, quoted;
    private final java.util.concurrent.ConcurrentHashMap<JsonMachine.PatternStr, long[]> insidePattern = new java.util.concurrent.ConcurrentHashMap<>();
    /** Per patterned string frame with length limits, at count 0: its walk with the limits ignored ({@link #patternWalk}). */
    private final java.util.concurrent.ConcurrentHashMap<JsonMachine.PatternStr, PatternWalk> patternWalks = new java.util.concurrent.ConcurrentHashMap<>();
    /** Most walks {@link #patternWalks} holds (up to about 2.5 MB each) before it starts over. */
    private static final int WALK_CACHE = 32;
    /** Most frames {@link #insidePattern} holds (25 KB each) before it starts over. */
    private static final int PATTERN_CACHE = 1024;
    /**
     * The tokens that are not plain on their own, by what follows their longest plain prefix (a string takes any
     * plain prefix without changing its state but for its count, so only that tail and the count decide): the distinct tails as a trie whose "tokens" are
     * group numbers, and each group's token ids.
     */
    private final TokenTrie tails;
    private final int[][] tailGroups;
    /** Per group: the characters of each token's plain prefix (as in tailGroups). */
    private final int[][] prefixChars;
    /** Per group: the characters its tail adds to the string, and whether the tail closes the string. */
    private final int[] tailChars;
    private final boolean[] tailCloses;
    /** plainUpTo[k]: the plain tokens of at most k characters; plainAll: all of them. */
    private final long[][] plainUpTo;
    private final long[] plainAll;

    private TokenMasker(O200kHarmony tok) {
        int n = O200kHarmony.NUM_RANKS;
        words = (tok.vocabSize() + 63) >>> 6;
        byte[][] text = new byte[n][];
        int[] chars = new int[n];
        int plain = 0;
        for (int id = 0; id < n; id++) {
            text[id] = tok.tokenBytes(id);
            chars[id] = JsonMachine.plainChars(text[id]);
            if (chars[id] >= 0) plain++;
        }
        int[] allIds = new int[n], rest = new int[n - plain];
        int r = 0;
        for (int id = 0; id < n; id++) {
            allIds[id] = id;
            if (chars[id] < 0) rest[r++] = id;
        }
        all = new TokenTrie(text, allIds);
        int[] withQuote = java.util.stream.IntStream.range(0, n).filter(id -> hasQuote(text[id])).toArray();
        int[] withoutQuote = java.util.stream.IntStream.range(0, n).filter(id -> !hasQuote(text[id])).toArray();
        quoted = new TokenTrie(text, withQuote);
        unquoted = new TokenTrie(text, withoutQuote);
        java.util.Map<String, java.util.List<Integer>> byTail = new java.util.LinkedHashMap<>();
        int[] prefixOf = new int[n];
        for (int id : rest) {
            byte[] t = text[id];
            int cut = JsonMachine.plainPrefix(t);
            prefixOf[id] = JsonMachine.plainChars(java.util.Arrays.copyOf(t, cut));
            byTail.computeIfAbsent(new String(t, cut, t.length - cut, java.nio.charset.StandardCharsets.ISO_8859_1),
                    k -> new java.util.ArrayList<>()).add(id);
        }
        tailGroups = new int[byTail.size()][];
        prefixChars = new int[byTail.size()][];
        tailChars = new int[byTail.size()];
        tailCloses = new boolean[byTail.size()];
        byte[][] tailText = new byte[byTail.size()][];
        int g = 0;
        for (var e : byTail.entrySet()) {
            tailText[g] = e.getKey().getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
            tailGroups[g] = e.getValue().stream().mapToInt(Integer::intValue).toArray();
            prefixChars[g] = java.util.Arrays.stream(tailGroups[g]).map(id -> prefixOf[id]).toArray();
            int added = JsonMachine.stringChars(tailText[g]);
            tailCloses[g] = added < 0;
            tailChars[g] = added < 0 ? -added - 1 : added;
            g++;
        }
        int[] groupIds = new int[g];
        for (int i = 0; i < g; i++) groupIds[i] = i;
        tails = new TokenTrie(tailText, groupIds);
        int longest = 0;
        for (int c : chars) longest = Math.max(longest, c);
        plainUpTo = new long[longest + 1][words]; // about 130 sets of 25 KB
        plainAll = new long[words];
        for (int id = 0; id < n; id++) {
            if (chars[id] < 0) continue;
            plainAll[id >>> 6] |= 1L << id;
            for (int k = chars[id]; k <= longest; k++) plainUpTo[k][id >>> 6] |= 1L << id;
        }
    }

    private static boolean hasQuote(byte[] b) {
        for (byte x : b) if (x == '"') return true;
        return false;
    }

    public static TokenMasker get() {
        TokenMasker m = instance;
        if (m == null) {
            synchronized (TokenMasker.class) {
                m = instance;
                if (m == null) instance = m = new TokenMasker(O200kHarmony.get());
            }
        }
        return m;
    }

    /**
     * Drops the masks cached for patterned strings (and, with {@code walks}, what was walked per automaton state), so
     * that a benchmark can time the first mask of a new state; the masks stay the same either way.
     */
    public void forgetPatternCaches(boolean walks) {
        insidePattern.clear();
        if (walks) patternWalks.clear();
    }

    /** Words of a mask over the whole vocabulary (special tokens included, always clear here). */
    public int words() {
        return words;
    }

    /** The ordinary tokens {@code state} can take next, or-ed into {@code mask}. */
    public void allowed(Object state, long[] mask) {
        if (state instanceof JsonMachine.Stack st && st.top() instanceof JsonMachine.PatternStr p) {
            long[] inside = insidePattern.get(p);
            if (inside == null) {
                inside = limited(p.node()) ? insideByCount(st) : insideExact(st);
                if (insidePattern.size() >= PATTERN_CACHE) insidePattern.clear();
                insidePattern.put(p, inside);
            }
            for (int w = 0; w < words; w++) mask[w] |= inside[w];
            walk(JSON_STEPS, quoted, state, mask, null);
            return;
        }
        JsonMachine.Str str = JsonMachine.plainString(state);
        if (str == null) {
            walk(JSON_STEPS, all, state, mask, null);
            return;
        }
        long[] plain = str.node().maxLength() == Integer.MAX_VALUE ? plainAll
                : plainUpTo[Math.min(plainUpTo.length - 1, str.node().maxLength() - str.count())];
        for (int w = 0; w < words; w++) mask[w] |= plain[w];
        // The other tokens: their tails walked as in a free string (same frames below), then each token's
        // characters (plain prefix + tail up to the closing quote) checked against the limits.
        boolean free = str.node().free();
        int lo = str.node().minLength() - str.count(), hi = free ? Integer.MAX_VALUE : str.node().maxLength() - str.count();
        Object walkFrom = free ? state : JsonMachine.freeString((JsonMachine.Stack) state);
        long[] groups = new long[(tailGroups.length + 63) >>> 6];
        walk(JSON_STEPS, tails, walkFrom, groups, null);
        for (int w = 0; w < groups.length; w++)
            for (long bits = groups[w]; bits != 0; bits &= bits - 1) {
                int grp = w * 64 + Long.numberOfTrailingZeros(bits);
                int[] ids = tailGroups[grp];
                if (free) {
                    for (int id : ids) mask[id >>> 6] |= 1L << id;
                    continue;
                }
                int[] pc = prefixChars[grp];
                int t = tailChars[grp];
                boolean closes = tailCloses[grp];
                for (int i = 0; i < ids.length; i++) {
                    int total = pc[i] + t;
                    if (total <= hi && (!closes || total >= lo)) mask[ids[i] >>> 6] |= 1L << ids[i];
                }
            }
    }

    private static boolean limited(JsonGrammar.StringNode node) {
        return node.minLength() > 0 || node.maxLength() != Integer.MAX_VALUE;
    }

    /** The quote-free tokens a patterned string's frame takes: every one tried along the trie. */
    long[] insideExact(JsonMachine.Stack state) {
        long[] inside = new long[words];
        walk(JSON_STEPS, unquoted, state, inside, null);
        return inside;
    }

    /**
     * The same as {@link #insideExact} from the frame's tokens walked once per count ({@link #patternWalk}): a token
     * is taken when the frame it ends in, at this count plus the characters it adds, is completable.
     */
    long[] insideByCount(JsonMachine.Stack state) {
        JsonMachine.PatternStr p = (JsonMachine.PatternStr) state.top();
        PatternWalk pw = patternWalks.get(p.at(0));
        if (pw == null) {
            pw = patternWalk(p.at(0), state.rest());
            if (patternWalks.size() >= WALK_CACHE) patternWalks.clear();
            patternWalks.put(p.at(0), pw);
        }
        long[] inside = new long[words];
        for (int g = 0; g < pw.ends.length; g++) {
            if (!pw.ends[g].at(p.count() + pw.added[g]).completable()) continue;
            if (pw.bits[g] != null) {
                long[] b = pw.bits[g];
                for (int w = 0; w < words; w++) inside[w] |= b[w];
            } else for (int id : pw.ids[g]) inside[id >>> 6] |= 1L << id;
        }
        return inside;
    }

    /**
     * The quote-free tokens a patterned string's frame (at count 0) takes with the length limits ignored, grouped by
     * the frame each ends in: ends[g] (at count 0) after added[g] characters; a large group also as a bitset. A token
     * never leaves the string, so the walk from the frame alone is the walk from any state with that frame on top.
     * Why the limits can wait until the end: a whole character's state is live at a count when some completion fits
     * between minLength and maxLength; a frame live after k characters has, for every frame on its way there, a
     * completion k - i characters longer that fits too, so checking the end frame (at the real count) is the same as
     * checking every step.
     */
    private PatternWalk patternWalk(JsonMachine.PatternStr frame, JsonMachine.Stack rest) {
        JsonGrammar.StringNode node = frame.node();
        JsonGrammar.StringNode free = new JsonGrammar.StringNode(node.minLength(), node.maxLength(), node.pattern().unlimited());
        JsonMachine.PatternStr start = new JsonMachine.PatternStr(free, 0, frame.q(), frame.acc(), frame.left(), frame.len(), frame.esc());
        long[] taken = new long[words];
        long[] ends = new long[O200kHarmony.NUM_RANKS];
        walk(JSON_STEPS, unquoted, new JsonMachine.Stack(start, rest), taken, ends);
        // group the taken tokens by end frame without boxing: a group number per token, then each group's ids
        java.util.HashMap<Long, Integer> groupOf = new java.util.HashMap<>();
        java.util.ArrayList<Long> endList = new java.util.ArrayList<>();
        int[] tokenGroup = new int[O200kHarmony.NUM_RANKS], sizes = new int[64];
        for (int w = 0; w < words; w++)
            for (long bits = taken[w]; bits != 0; bits &= bits - 1) {
                int id = w * 64 + Long.numberOfTrailingZeros(bits);
                long key = ends[id];
                Integer g = groupOf.get(key);
                if (g == null) {
                    groupOf.put(key, g = endList.size());
                    endList.add(key);
                    if (g == sizes.length) sizes = java.util.Arrays.copyOf(sizes, 2 * g);
                }
                tokenGroup[id] = g;
                sizes[g]++;
            }
        int n = endList.size();
        JsonMachine.PatternStr[] endFrames = new JsonMachine.PatternStr[n];
        int[] added = new int[n];
        int[][] ids = new int[n][];
        long[][] bits = new long[n][];
        for (int g = 0; g < n; g++) {
            long k = endList.get(g);
            endFrames[g] = new JsonMachine.PatternStr(node, 0, (int) (k >>> 32 & 0xffff), (int) (k >>> 8 & 0xffffff),
                    (int) (k >>> 5 & 3), (int) (k >>> 1 & 15), (k & 1) != 0);
            added[g] = (int) (k >>> 48);
            ids[g] = new int[sizes[g]];
            sizes[g] = 0;
        }
        for (int w = 0; w < words; w++)
            for (long b = taken[w]; b != 0; b &= b - 1) {
                int id = w * 64 + Long.numberOfTrailingZeros(b);
                int g = tokenGroup[id];
                ids[g][sizes[g]++] = id;
            }
        for (int g = 0; g < n; g++)
            if (ids[g].length > words) { // or-ing whole words beats setting bits one by one
                bits[g] = new long[words];
                for (int id : ids[g]) bits[g][id >>> 6] |= 1L << id;
            }
        return new PatternWalk(endFrames, added, ids, bits);
    }

    /**
     * The fields of a frame of one string node, packed: count and q below 2^16 (states stay under MAX_STATES; a token
     * adds far fewer characters), a partial character's bits below 2^21, left below 4, len at most 4.
     */
    private static long frameKey(JsonMachine.PatternStr f) {
        return (long) f.count() << 48 | (long) f.q() << 32 | (long) f.acc() << 8 | f.left() << 5 | f.len() << 1 | (f.esc() ? 1 : 0);
    }

    /** A frame's walk with the length limits ignored: see {@link #patternWalk}. */
    private record PatternWalk(JsonMachine.PatternStr[] ends, int[] added, int[][] ids, long[][] bits) {}

    /** A new mask of what {@code state} can take next. */
    public long[] allowed(Object state) {
        long[] mask = new long[words];
        allowed(state, mask);
        return mask;
    }

    /** The ordinary tokens {@code state} of {@code matcher} can take next, or-ed into {@code mask}: every token tried along the trie. */
    public void walk(ByteMatcher matcher, Object state, long[] mask) {
        walk(matcher, all, state, mask, null);
    }

    /**
     * The one trie walk (JSON states, JSON string tails and GBNF states alike): steps {@code matcher} along the trie
     * in preorder from {@code start}, sets the bit of every token whose bytes it takes, and skips a subtree at the
     * first byte it refuses. With {@code endKeys}, also records there the {@link #frameKey} of the patterned-string frame each taken token ends in (kept as a number: holding 200k states was most of the cost).
     */
    private static void walk(ByteMatcher matcher, TokenTrie trie, Object start, long[] mask, long[] endKeys) {
        Object[] at = new Object[trie.maxDepth + 1];
        at[0] = start;
        byte[] bytes = trie.bytes;
        short[] depths = trie.depths;
        int[] tokens = trie.tokens, ends = trie.ends;
        int n = bytes.length;
        for (int j = 0; j < n; ) {
            int d = depths[j];
            Object s = matcher.step(at[d - 1], bytes[j] & 0xff);
            if (s == null) {
                j = ends[j];
                continue;
            }
            int t = tokens[j];
            if (t >= 0) {
                mask[t >>> 6] |= 1L << t;
                if (endKeys != null) endKeys[t] = frameKey((JsonMachine.PatternStr) ((JsonMachine.Stack) s).top());
            }
            at[d] = s;
            j++;
        }
    }
}
