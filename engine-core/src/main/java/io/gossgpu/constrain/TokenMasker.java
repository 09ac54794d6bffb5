package io.gossgpu.constrain;

import io.gossgpu.tokenizer.O200kHarmony;

/**
 * Which ordinary tokens of the o200k vocabulary a {@link JsonMachine} state can take next, as a bitset (bit {@code id}
 * of word {@code id >>> 6}). The tokens' bytes form a {@link TokenTrie}; a walk steps the matcher along it and drops
 * a whole subtree at the first byte the matcher refuses. Inside a string (the one state where nearly every token
 * fits) the tokens that are plain text on their own (whole UTF-8 characters, no quote, backslash or control byte)
 * come from precomputed sets by length; the others are grouped by what follows their plain prefix, and only those
 * distinct tails are walked (then checked against the string's length limits token by token). Inside a string with a
 * pattern the masks are precomputed per automaton frame when the schema becomes a matcher ({@link #prepare}); frames
 * left out are walked without allocation ({@link PatternFrames}) when first met. Built once (about a second) and
 * shared; thread-safe.
 */
public final class TokenMasker {
    private static volatile TokenMasker instance;
    /** Steps JsonMachine states for the JSON walks (any grammar's states: the matcher's start() is never used here). */
    private static final ByteMatcher JSON_STEPS = ByteMatcher.json(null);

    private final int words;
    private final TokenTrie all;
    /**
     * The tokens without a quote byte and those with one: inside a patterned string the first never leave the
     * string, so what they allow depends on the string's frame alone: precomputed ({@link #prepare}) or cached by frame ({@link #insidePattern});
     * the second are walked from the whole state each time.
     */
    private final TokenTrie unquoted, quoted;

    private final LruCache<JsonMachine.PatternStr, long[]> insidePattern;
    /** Per patterned string frame met that was not precomputed, at count 0: its walk with the limits ignored ({@link #patternWalk}). */
    private final LruCache<JsonMachine.PatternStr, PatternWalk> patternWalks;
    /** Most walks {@link #patternWalks} keeps (up to about 2.5 MB each), the most recently used. */
    private static final int WALK_CACHE = 32;
    /** Most frames {@link #insidePattern} keeps (25 KB each), the most recently used. */
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
    /** Each token's first byte. */
    private final byte[] firstByte;
    /** Per ordinary token, its longest proper prefix that is a token, or -1. */
    private final int[] prefixes;

    private TokenMasker(O200kHarmony tok) {
        this(tok, PATTERN_CACHE, WALK_CACHE);
    }

    /** With caches of {@code patternCache} frames' masks and {@code walkCache} frames' walks (tests take small ones). */
    TokenMasker(O200kHarmony tok, int patternCache, int walkCache) {
        insidePattern = new LruCache<>(patternCache);
        patternWalks = new LruCache<>(walkCache);
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
        int[] withQuote = java.util.stream.IntStream.range(0, n)
                .filter(id -> hasQuote(text[id]))
                .toArray();
        int[] withoutQuote = java.util.stream.IntStream.range(0, n)
                .filter(id -> !hasQuote(text[id]))
                .toArray();
        quoted = new TokenTrie(text, withQuote);
        unquoted = new TokenTrie(text, withoutQuote);
        java.util.Map<String, java.util.List<Integer>> byTail = new java.util.LinkedHashMap<>();
        int[] prefixOf = new int[n];
        for (int id : rest) {
            byte[] t = text[id];
            int cut = JsonMachine.plainPrefix(t);
            prefixOf[id] = JsonMachine.plainChars(java.util.Arrays.copyOf(t, cut));
            byTail.computeIfAbsent(
                            new String(t, cut, t.length - cut, java.nio.charset.StandardCharsets.ISO_8859_1),
                            k -> new java.util.ArrayList<>())
                    .add(id);
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
            prefixChars[g] = java.util.Arrays.stream(tailGroups[g])
                    .map(id -> prefixOf[id])
                    .toArray();
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
        prefixes = prefixes(all, n);
        firstByte = new byte[n];
        for (int id = 0; id < n; id++) firstByte[id] = text[id][0];
        for (int id = 0; id < n; id++) {
            if (chars[id] < 0) continue;
            plainAll[id >>> 6] |= 1L << id;
            for (int k = chars[id]; k <= longest; k++) plainUpTo[k][id >>> 6] |= 1L << id;
        }
    }

    /** Each of the {@code n} tokens' longest proper prefix in {@code trie} that is a token, or -1 (one pass). */
    private static int[] prefixes(TokenTrie trie, int n) {
        int[] out = new int[n];
        java.util.Arrays.fill(out, -1);
        int[] nearest = new int[trie.maxDepth + 1]; // the deepest token on the path down to each depth
        nearest[0] = -1;
        for (int j = 0; j < trie.bytes.length; j++) {
            int d = trie.depths[j], t = trie.tokens[j];
            if (t >= 0) out[t] = nearest[d - 1];
            nearest[d] = t >= 0 ? t : nearest[d - 1];
        }
        return out;
    }

    /** Per ordinary token, the longest token that is a proper byte-prefix of it, or -1 (shared; do not change). */
    public int[] prefixes() {
        return prefixes;
    }

    private final int quote = O200kHarmony.get().encode("\"")[0];

    /**
     * The closing quote's id when {@code state} is inside a JSON string between characters (where a model that means
     * to stop has left a string open), else -1.
     */
    public int closer(Object state) {
        if (!(state instanceof JsonMachine.Stack st)) return -1;
        boolean open = JsonMachine.plainString(state) != null
                || st.top() instanceof JsonMachine.FreeKey k && k.pending() == 0
                || st.top() instanceof JsonMachine.PatternStr p && p.left() == 0 && !p.esc();
        return open ? quote : -1;
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

    /** Whether frame {@code p}'s mask is cached (tests; does not count as a use). */
    boolean insideKept(JsonMachine.PatternStr p) {
        return insidePattern.contains(p);
    }

    /** Whether the walk of {@code p}'s frame is cached (tests; does not count as a use). */
    boolean walkKept(JsonMachine.PatternStr p) {
        return patternWalks.contains(p.at(0));
    }

    /** Words of a mask over the whole vocabulary (special tokens included, always clear here). */
    public int words() {
        return words;
    }

    /** The ordinary tokens {@code state} can take next, or-ed into {@code mask}. */
    public void allowed(Object state, long[] mask) {
        if (state instanceof JsonMachine.Stack st && st.top() instanceof JsonMachine.PatternStr p) {
            long[] inside = inside(p);
            for (int w = 0; w < words; w++) mask[w] |= inside[w];
            walk(JSON_STEPS, quoted, state, mask);
            return;
        }
        if (state instanceof JsonMachine.Stack st && st.top() instanceof JsonMachine.FreeKey k && k.pending() == 0) {
            freeKey(st, k, mask);
            return;
        }
        JsonMachine.Str str = JsonMachine.plainString(state);
        if (str == null) {
            walk(JSON_STEPS, all, state, mask);
            return;
        }
        long[] plain = str.node().maxLength() == Integer.MAX_VALUE
                ? plainAll
                : plainUpTo[Math.min(plainUpTo.length - 1, str.node().maxLength() - str.count())];
        for (int w = 0; w < words; w++) mask[w] |= plain[w];
        // The other tokens: their tails walked as in a free string (same frames below), then each token's
        // characters (plain prefix + tail up to the closing quote) checked against the limits.
        boolean free = str.node().free();
        int lo = str.node().minLength() - str.count(),
                hi = free ? Integer.MAX_VALUE : str.node().maxLength() - str.count();
        Object walkFrom = free ? state : JsonMachine.freeString((JsonMachine.Stack) state);
        long[] groups = new long[(tailGroups.length + 63) >>> 6];
        walk(JSON_STEPS, tails, walkFrom, groups);
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

    /**
     * What a free key at a plain stretch takes: the plain tokens, and the others as a free string's tails take them,
     * but each token that closes the key stepped from the key itself, which refuses a key the object already has.
     */
    private void freeKey(JsonMachine.Stack state, JsonMachine.FreeKey key, long[] mask) {
        for (int w = 0; w < words; w++) mask[w] |= plainAll[w];
        long[] groups = new long[(tailGroups.length + 63) >>> 6];
        walk(JSON_STEPS, tails, key.asString(state.rest()), groups);
        O200kHarmony tok = O200kHarmony.get();
        for (int w = 0; w < groups.length; w++)
            for (long bits = groups[w]; bits != 0; bits &= bits - 1) {
                int grp = w * 64 + Long.numberOfTrailingZeros(bits);
                for (int id : tailGroups[grp])
                    if (!tailCloses[grp] || JsonMachine.step(state, tok.tokenBytes(id)) != null)
                        mask[id >>> 6] |= 1L << id;
            }
    }

    /**
     * The quote-free tokens patterned-string frame {@code p} takes (they never leave the string, so what is below it
     * does not matter): precomputed with its schema's matcher ({@link #prepare}), else cached per frame.
     */
    long[] inside(JsonMachine.PatternStr p) {
        PatternMasks pre = p.node().pattern().masks;
        long[] inside = pre == null ? null : pre.get(p.frame(), p.count());
        if (inside != null) return inside;
        inside = insidePattern.get(p);
        if (inside == null) {
            inside = pre != null && p.left() == 1 ? insideLastByte(pre, p) : insideByCount(p);
            insidePattern.put(p, inside);
        }
        return inside;
    }

    /**
     * Precomputes the masks of the patterned strings of {@code grammar} ({@link PatternMasks}), so that a reply never
     * waits on a walk of the vocabulary inside one: every frame between characters and after a backslash, at every
     * count, within {@link #PREPARED_MASKS} distinct masks per pattern. Done once per compiled pattern.
     */
    void prepare(JsonGrammar grammar) {
        for (StringPattern p : PatternMasks.in(grammar)) if (p.masks == null) p.masks = precompute(p);
    }

    /** Most distinct masks {@link #prepare} keeps per pattern (25 KB each); frames past it are walked when met. */
    static final int PREPARED_MASKS = 512;

    private PatternMasks precompute(StringPattern p) {
        StringPattern free = p.unlimited();
        int cap = p.lengthCap();
        java.util.Map<Long, long[][]> byFrame = new java.util.HashMap<>();
        java.util.Map<MaskKey, long[]> distinct = new java.util.HashMap<>();
        frames:
        for (int q = 0; q < p.states(); q++)
            for (int esc = 0; esc < 2; esc++) {
                long f = PatternFrames.of(q, 0, 0, 0, esc == 1);
                if (!PatternFrames.completable(free, 0, f)) continue; // no string goes on from here
                if (distinct.size() + cap + 1 > PREPARED_MASKS) break frames;
                long[][] perCount = new long[cap + 1][];
                if (free == p) { // no limits: the count stays 0, and every token the walk takes keeps the string
                    // completable
                    long[] taken = new long[words];
                    patternWalk(free, f, false, taken, null);
                    perCount[0] = distinct.computeIfAbsent(new MaskKey(taken), k -> k.bits);
                    byFrame.put(f, perCount);
                    continue;
                }
                PatternWalk w = patternWalk(free, f);
                long[] sig = null;
                for (int c = 0; c <= cap; c++) {
                    long[] now = w.completable(p, c);
                    if (sig != null && java.util.Arrays.equals(sig, now)) {
                        perCount[c] = perCount[c - 1];
                        continue;
                    }
                    long[] m;
                    if (sig == null) m = w.mask(now, words);
                    else { // the groups are disjoint: toggle those that changed since the last count
                        m = perCount[c - 1].clone();
                        for (int i = 0; i < sig.length; i++) sig[i] ^= now[i];
                        w.toggle(sig, m);
                    }
                    sig = now;
                    perCount[c] = distinct.computeIfAbsent(new MaskKey(m), k -> k.bits);
                }
                byFrame.put(f, perCount);
            }
        PatternWalk[][] cont = new PatternWalk[p.states()][];
        for (int q = 0; q < p.states(); q++) if (free.live(q, 0)) cont[q] = continuationWalks(free, q);
        return new PatternMasks(byFrame, p, distinct.size(), cont);
    }

    /**
     * The quote-free tokens that start with a continuation byte, walked as if that byte ended a character leading to
     * state {@code q} (limits ignored), and split by that byte's low six bits: what a frame one byte short of a
     * whole character takes is put together from them ({@link #insideLastByte}) instead of a walk of its own.
     */
    private PatternWalk[] continuationWalks(StringPattern free, int q) {
        Taken all = new Taken();
        patternWalk(free, (long) q << 32, true, null, all);
        Taken[] byByte = new Taken[64];
        for (int i = 0; i < all.n; i++) {
            int x = firstByte[all.ids[i]] & 0x3f;
            if (byByte[x] == null) byByte[x] = new Taken();
            byByte[x].add(all.ids[i], all.keys[i]);
        }
        PatternWalk[] out = new PatternWalk[64];
        for (int x = 0; x < 64; x++) if (byByte[x] != null) out[x] = group(byByte[x]);
        return out;
    }

    /**
     * The quote-free tokens frame {@code p} takes when one continuation byte is due: for each such byte, the
     * character it completes, the state that character leads to, and that state's {@link #continuationWalks} at
     * this count. The same as {@link #insideByCount}, which would walk the tokens again.
     */
    private long[] insideLastByte(PatternMasks pre, JsonMachine.PatternStr p) {
        StringPattern pattern = p.node().pattern(), free = pattern.unlimited();
        int len = p.len();
        int min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000, max = len == 2 ? 0x7ff : len == 3 ? 0xffff : 0x10ffff;
        long[] inside = new long[words];
        for (int x = 0; x < 64; x++) {
            int cp = p.acc() << 6 | x;
            if (cp < min || cp > max) continue;
            int t = free.step(p.q(), cp);
            if (t < 0 || !free.live(t, 0)) continue;
            PatternWalk w = pre.continuation(t, x);
            if (w != null)
                w.toggle(w.completable(pattern, p.count()), inside); // tokens of different bytes are disjoint
        }
        return inside;
    }

    /** A mask as a map key, by content. */
    private record MaskKey(long[] bits) {
        @Override
        public boolean equals(Object o) {
            return o instanceof MaskKey k && java.util.Arrays.equals(bits, k.bits);
        }

        @Override
        public int hashCode() {
            return java.util.Arrays.hashCode(bits);
        }
    }

    /** The quote-free tokens a patterned string's frame takes: every one tried along the trie by the JSON matcher (tests' reference). */
    long[] insideExact(JsonMachine.Stack state) {
        long[] inside = new long[words];
        walk(JSON_STEPS, unquoted, state, inside);
        return inside;
    }

    /**
     * The same as {@link #insideExact} from the frame's tokens walked once with the length limits ignored
     * ({@link #patternWalk}, cached per frame): a token is taken when the frame it ends in, at this count plus the
     * characters it adds, is completable.
     */
    long[] insideByCount(JsonMachine.PatternStr p) {
        JsonMachine.PatternStr key = p.at(0);
        PatternWalk pw = patternWalks.get(key);
        if (pw == null) {
            pw = patternWalk(p.node().pattern().unlimited(), p.frame());
            patternWalks.put(key, pw);
        }
        return pw.mask(pw.completable(p.node().pattern(), p.count()), words);
    }

    /**
     * The quote-free tokens that frame {@code start} of a patterned string takes with the length limits ignored
     * ({@code free}: its pattern without them), grouped by the frame each ends in: ends[g] after added[g] characters;
     * a large group also as a bitset. A token never leaves the string, so the walk from the frame alone is the walk
     * from any state with that frame on top. Why the limits can wait until the end: a whole character's state is
     * live at a count when some completion fits between minLength and maxLength; a frame live after k characters
     * has, for every frame on its way there, a completion k - i characters longer that fits too, so checking the end
     * frame (at the real count) is the same as checking every step.
     */
    private PatternWalk patternWalk(StringPattern free, long start) {
        Taken taken = new Taken();
        patternWalk(free, start, false, null, taken);
        return group(taken);
    }

    /** The tokens of a walk grouped by the frame each ends in and the characters it adds. */
    private PatternWalk group(Taken taken) {
        // group the taken tokens by end frame and characters added: a group number per token, then each group's ids
        java.util.HashMap<Long, Integer> groupOf = new java.util.HashMap<>();
        java.util.ArrayList<Long> endList = new java.util.ArrayList<>();
        int[] tokenGroup = new int[taken.n], sizes = new int[64];
        for (int i = 0; i < taken.n; i++) {
            long key = taken.keys[i];
            Integer g = groupOf.get(key);
            if (g == null) {
                groupOf.put(key, g = endList.size());
                endList.add(key);
                if (g == sizes.length) sizes = java.util.Arrays.copyOf(sizes, 2 * g);
            }
            tokenGroup[i] = g;
            sizes[g]++;
        }
        int n = endList.size();
        long[] endFrames = new long[n];
        int[] added = new int[n];
        int[][] ids = new int[n][];
        long[][] bits = new long[n][];
        for (int g = 0; g < n; g++) {
            long k = endList.get(g);
            endFrames[g] = k & ((1L << 48) - 1);
            added[g] = (int) (k >>> 48);
            ids[g] = new int[sizes[g]];
            sizes[g] = 0;
        }
        for (int i = 0; i < taken.n; i++) {
            int g = tokenGroup[i];
            ids[g][sizes[g]++] = taken.ids[i];
        }
        for (int g = 0; g < n; g++)
            if (ids[g].length > words) { // or-ing whole words beats setting bits one by one
                bits[g] = new long[words];
                for (int id : ids[g]) bits[g][id >>> 6] |= 1L << id;
            }
        return new PatternWalk(endFrames, added, ids, bits);
    }

    /**
     * The tokens a pattern walk took, in trie order, each with the frame it ends in and the characters it adds above
     * bit 48 (a list, not a table over the vocabulary: most walks from inside a character take a few hundred tokens).
     */
    private static final class Taken {
        int[] ids = new int[256];
        long[] keys = new long[256];
        int n;

        void add(int id, long key) {
            if (n == ids.length) {
                ids = java.util.Arrays.copyOf(ids, 2 * n);
                keys = java.util.Arrays.copyOf(keys, 2 * n);
            }
            ids[n] = id;
            keys[n++] = key;
        }
    }

    /**
     * The pattern walk itself: the quote-free trie stepped with {@link PatternFrames#step} (no allocation) from frame
     * {@code start}; sets the bit of every token taken in {@code mask} and adds it to {@code taken}, either may be null.
     * With {@code continuation}, a token's first byte must be a continuation byte and leads to {@code start} as a whole
     * character (one added).
     */
    private void patternWalk(StringPattern free, long start, boolean continuation, long[] mask, Taken taken) {
        TokenTrie trie = unquoted;
        long[] at = new long[trie.maxDepth + 1];
        int[] added = new int[trie.maxDepth + 1];
        at[0] = start;
        byte[] bytes = trie.bytes;
        short[] depths = trie.depths;
        int[] tokens = trie.tokens, ends = trie.ends;
        int n = bytes.length;
        for (int j = 0; j < n; ) {
            int d = depths[j];
            int b = bytes[j] & 0xff;
            long f = continuation && d == 1
                    ? ((b & 0xc0) == 0x80 ? start : PatternFrames.DEAD)
                    : PatternFrames.step(free, 0, at[d - 1], b);
            if (f == PatternFrames.DEAD) {
                j = ends[j];
                continue;
            }
            int a = added[d - 1] + (PatternFrames.whole(f) ? 1 : 0);
            int t = tokens[j];
            if (t >= 0) {
                if (mask != null) mask[t >>> 6] |= 1L << t;
                if (taken != null) taken.add(t, (long) a << 48 | f);
            }
            at[d] = f;
            added[d] = a;
            j++;
        }
    }

    /** A frame's walk with the length limits ignored: see {@link #patternWalk}. */
    record PatternWalk(long[] ends, int[] added, int[][] ids, long[][] bits) {
        /** The groups whose end frame is completable when the walk starts after {@code count} characters, as a bitset. */
        long[] completable(StringPattern p, int count) {
            long[] live = new long[(ends.length + 63) >>> 6];
            for (int g = 0; g < ends.length; g++)
                if (PatternFrames.completable(p, count + added[g], ends[g])) live[g >>> 6] |= 1L << g;
            return live;
        }

        /** The tokens of the groups in {@code groups}. */
        long[] mask(long[] groups, int words) {
            long[] inside = new long[words];
            toggle(groups, inside);
            return inside;
        }

        /** Flips the bits of the tokens of the groups in {@code groups} (each token is in one group). */
        void toggle(long[] groups, long[] mask) {
            for (int w = 0; w < groups.length; w++)
                for (long gb = groups[w]; gb != 0; gb &= gb - 1) {
                    int g = w * 64 + Long.numberOfTrailingZeros(gb);
                    if (bits[g] != null) {
                        long[] b = bits[g];
                        for (int i = 0; i < mask.length; i++) mask[i] ^= b[i];
                    } else for (int id : ids[g]) mask[id >>> 6] ^= 1L << id;
                }
        }
    }

    /** A new mask of what {@code state} can take next. */
    public long[] allowed(Object state) {
        long[] mask = new long[words];
        allowed(state, mask);
        return mask;
    }

    /** The ordinary tokens {@code state} of {@code matcher} can take next, or-ed into {@code mask}: every token tried along the trie. */
    public void walk(ByteMatcher matcher, Object state, long[] mask) {
        walk(matcher, all, state, mask);
    }

    /**
     * The one trie walk (JSON states, JSON string tails and GBNF states alike): steps {@code matcher} along the trie
     * in preorder from {@code start}, sets the bit of every token whose bytes it takes, and skips a subtree at the
     * first byte it refuses.
     */
    private static void walk(ByteMatcher matcher, TokenTrie trie, Object start, long[] mask) {
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
            if (t >= 0) mask[t >>> 6] |= 1L << t;
            at[d] = s;
            j++;
        }
    }
}
