package io.gossgpu.tokenizer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The o200k_harmony tokenizer of gpt-oss: the o200k_base byte-pair ranks (ids 0..199997, read from the
 * rank file that ships inside jtokkit) plus the Harmony special tokens (ids 199998..201087).
 *
 * <p>Encoding is a pre-tokenizing regex (the o200k split pattern) followed by lowest-rank-first byte pair
 * merging inside every piece, as tiktoken does. {@link #encode(String)} never produces special tokens:
 * {@code "<|start|>"} in user text encodes as ordinary text. {@link #encodeWithSpecials(String)} maps every
 * special-token string to its id.
 *
 * <p>Lone surrogates: a Java {@code String} may hold unpaired UTF-16 surrogates, which have no UTF-8 form.
 * Every encode method first replaces each unpaired surrogate with U+FFFD (see {@link #sanitize(String)}).
 * That is what tiktoken does for a Python string it cannot encode as UTF-8 (it re-decodes the text with
 * {@code "surrogatepass"} / {@code "replace"}, turning paired surrogates into their code point and lone
 * ones into U+FFFD), and what the JS/WASM ports do (TextEncoder replaces lone surrogates with U+FFFD).
 * Deterministic, never throws.
 *
 * <p>Id 200018 is {@code <|endofprompt|>} (inherited from o200k_base, as in the gpt-oss Hugging Face
 * tokenizer); there is no {@code <|reserved_200018|>}.
 *
 * <p>Instances are immutable and thread-safe; {@link #get()} returns the shared one (loaded lazily, ~0.5 s).
 */
public final class O200kHarmony {

    public static final int VOCAB_SIZE = 201088;
    /** Number of BPE ranks (ids 0..199997). */
    public static final int NUM_RANKS = 199998;

    public static final int START_OF_TEXT = 199998;
    public static final int END_OF_TEXT = 199999;
    public static final int RETURN = 200002;
    public static final int CONSTRAIN = 200003;
    public static final int CHANNEL = 200005;
    public static final int START = 200006;
    public static final int END = 200007;
    public static final int MESSAGE = 200008;
    public static final int CALL = 200012;
    public static final int END_OF_PROMPT = 200018;

    private static final String RANK_RESOURCE = "/com/knuddels/jtokkit/o200k_base.tiktoken";

    /** The o200k_base pre-tokenizer. {@code (?U)}: \s is Unicode White_Space, as in Rust's regex crate. */
    static final Pattern SPLIT = Pattern.compile(
            String.join(
                    "|",
                    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?iu:'s|'t|'re|'ve|'m|'ll|'d)?",
                    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?iu:'s|'t|'re|'ve|'m|'ll|'d)?",
                    "\\p{N}{1,3}",
                    " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
                    "\\s*[\\r\\n]+",
                    "\\s+(?!\\S)",
                    "\\s+"),
            Pattern.UNICODE_CHARACTER_CLASS);

    private static volatile O200kHarmony instance;

    private final byte[][] rankBytes; // id -> bytes, for ids < NUM_RANKS
    private final RankMap ranks; // bytes -> id
    private final String[] specialNames; // id - NUM_RANKS -> name
    private final Map<String, Integer> specialIds; // name -> id
    private final Pattern specialPattern;

    private O200kHarmony(byte[][] rankBytes) {
        this.rankBytes = rankBytes;
        this.ranks = new RankMap(rankBytes);
        this.specialNames = new String[VOCAB_SIZE - NUM_RANKS];
        Map<String, Integer> ids = new LinkedHashMap<>();
        for (int id = NUM_RANKS; id < VOCAB_SIZE; id++) {
            String name = switch (id) {
                case START_OF_TEXT -> "<|startoftext|>";
                case END_OF_TEXT -> "<|endoftext|>";
                case RETURN -> "<|return|>";
                case CONSTRAIN -> "<|constrain|>";
                case CHANNEL -> "<|channel|>";
                case START -> "<|start|>";
                case END -> "<|end|>";
                case MESSAGE -> "<|message|>";
                case CALL -> "<|call|>";
                case END_OF_PROMPT -> "<|endofprompt|>";
                default -> "<|reserved_" + id + "|>";
            };
            specialNames[id - NUM_RANKS] = name;
            ids.put(name, id);
        }
        this.specialIds = Collections.unmodifiableMap(ids);
        // Longest names first so that no name is shadowed by a prefix (none is, but be safe).
        String alt = ids.keySet().stream()
                .sorted((a, b) -> b.length() - a.length())
                .map(Pattern::quote)
                .reduce((a, b) -> a + "|" + b)
                .orElseThrow();
        this.specialPattern = Pattern.compile(alt);
    }

    /** The shared instance, loaded on first use. */
    public static O200kHarmony get() {
        O200kHarmony t = instance;
        if (t == null) {
            synchronized (O200kHarmony.class) {
                t = instance;
                if (t == null) instance = t = new O200kHarmony(loadRanks());
            }
        }
        return t;
    }

    private static byte[][] loadRanks() {
        byte[][] table = new byte[NUM_RANKS][];
        try (InputStream in = O200kHarmony.class.getResourceAsStream(RANK_RESOURCE)) {
            if (in == null)
                throw new IllegalStateException("o200k_base rank file " + RANK_RESOURCE
                        + " not found on the class path (it ships in com.knuddels:jtokkit)");
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII), 1 << 16);
            Base64.Decoder b64 = Base64.getDecoder();
            String line;
            int n = 0;
            while ((line = r.readLine()) != null) {
                if (line.isEmpty()) continue;
                int sp = line.indexOf(' ');
                int rank = Integer.parseInt(line, sp + 1, line.length(), 10);
                if (rank < 0 || rank >= NUM_RANKS || table[rank] != null)
                    throw new IllegalStateException("bad rank " + rank + " in " + RANK_RESOURCE);
                table[rank] = b64.decode(line.substring(0, sp));
                n++;
            }
            if (n != NUM_RANKS)
                throw new IllegalStateException(RANK_RESOURCE + " has " + n + " ranks, expected " + NUM_RANKS);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + RANK_RESOURCE, e);
        }
        return table;
    }

    public int vocabSize() {
        return VOCAB_SIZE;
    }

    // ---------------------------------------------------------------- encoding

    /** Encodes text as ordinary text: special-token strings in it are not special. */
    public int[] encode(String text) {
        IntBuf out = new IntBuf(Math.max(16, text.length() / 3));
        encodeOrdinary(sanitize(text), out);
        return out.toArray();
    }

    /** Encodes text, turning every special-token string ({@code <|start|>}, {@code <|reserved_200100|>}, ...) into its id. */
    public int[] encodeWithSpecials(String text) {
        String s = sanitize(text);
        IntBuf out = new IntBuf(Math.max(16, s.length() / 3));
        Matcher m = specialPattern.matcher(s);
        int pos = 0;
        while (m.find()) {
            encodeOrdinary(s.substring(pos, m.start()), out);
            out.add(specialIds.get(m.group()));
            pos = m.end();
        }
        encodeOrdinary(s.substring(pos), out);
        return out.toArray();
    }

    private void encodeOrdinary(String s, IntBuf out) {
        if (s.isEmpty()) return;
        Matcher m = SPLIT.matcher(s);
        while (m.find()) {
            byte[] piece = s.substring(m.start(), m.end()).getBytes(StandardCharsets.UTF_8);
            int whole = ranks.get(piece, 0, piece.length);
            if (whole >= 0) out.add(whole);
            else bytePairMerge(piece, out);
        }
    }

    /** Pieces at least this long are merged with a heap (O(n log n)) instead of by scanning (O(n^2)). */
    static final int HEAP_MERGE_MIN = 128;

    private void bytePairMerge(byte[] piece, IntBuf out) {
        if (piece.length >= HEAP_MERGE_MIN) bytePairMergeHeap(piece, out);
        else bytePairMergeScan(piece, out);
    }

    /** Lowest-rank-first merging of adjacent parts, as tiktoken: ties go to the leftmost pair. */
    void bytePairMergeScan(byte[] piece, IntBuf out) {
        int n = piece.length;
        // starts[0..count] are part boundaries; pairRank[i] = rank of parts i and i+1 joined
        int[] starts = new int[n + 1];
        int[] pairRank = new int[n + 1];
        for (int i = 0; i <= n; i++) starts[i] = i;
        int count = n + 1;
        for (int i = 0; i + 2 < count; i++) pairRank[i] = rankOf(piece, starts[i], starts[i + 2]);
        pairRank[count - 2] = Integer.MAX_VALUE;
        pairRank[count - 1] = Integer.MAX_VALUE;
        while (count > 2) {
            int best = Integer.MAX_VALUE, at = -1;
            for (int i = 0; i + 1 < count - 1; i++) {
                if (pairRank[i] < best) {
                    best = pairRank[i];
                    at = i;
                }
            }
            if (at < 0) break;
            // remove boundary at+1
            System.arraycopy(starts, at + 2, starts, at + 1, count - at - 2);
            System.arraycopy(pairRank, at + 2, pairRank, at + 1, count - at - 2);
            count--;
            pairRank[at] = at + 2 < count ? rankOf(piece, starts[at], starts[at + 2]) : Integer.MAX_VALUE;
            if (at > 0) pairRank[at - 1] = rankOf(piece, starts[at - 1], starts[at + 1]);
        }
        for (int i = 0; i + 1 < count; i++) {
            int r = ranks.get(piece, starts[i], starts[i + 1] - starts[i]);
            if (r < 0) throw new IllegalStateException("no rank for a single byte part (corrupt rank table)");
            out.add(r);
        }
    }

    /**
     * The same merge order as {@link #bytePairMergeScan} (lowest rank first, leftmost on ties), with parts in a
     * linked list and candidate pairs in a min-heap keyed by (rank, start); stale heap entries are skipped.
     */
    void bytePairMergeHeap(byte[] piece, IntBuf out) {
        int n = piece.length;
        int[] next = new int[n + 1], prev = new int[n + 1], pairRank = new int[n + 1];
        boolean[] alive = new boolean[n + 1];
        for (int i = 0; i <= n; i++) {
            next[i] = i + 1;
            prev[i] = i - 1;
            alive[i] = true;
        }
        LongHeap heap = new LongHeap(n);
        for (int i = 0; i + 2 <= n; i++) {
            pairRank[i] = rankOf(piece, i, i + 2);
            if (pairRank[i] != Integer.MAX_VALUE) heap.push(((long) pairRank[i] << 32) | i);
        }
        pairRank[n - 1] = Integer.MAX_VALUE;
        while (!heap.isEmpty()) {
            long e = heap.pop();
            int rank = (int) (e >>> 32), s = (int) e;
            if (!alive[s] || pairRank[s] != rank) continue; // stale
            int t = next[s]; // merge part s with part t
            alive[t] = false;
            next[s] = next[t];
            if (next[t] <= n) prev[next[t]] = s;
            int ns = next[s];
            pairRank[s] = ns < n ? rankOf(piece, s, next[ns]) : Integer.MAX_VALUE;
            if (pairRank[s] != Integer.MAX_VALUE) heap.push(((long) pairRank[s] << 32) | s);
            int p = prev[s];
            if (p >= 0) {
                pairRank[p] = rankOf(piece, p, next[s]);
                if (pairRank[p] != Integer.MAX_VALUE) heap.push(((long) pairRank[p] << 32) | p);
            }
        }
        for (int i = 0; i < n; i = next[i]) {
            int r = ranks.get(piece, i, next[i] - i);
            if (r < 0) throw new IllegalStateException("no rank for a single byte part (corrupt rank table)");
            out.add(r);
        }
    }

    /** Binary min-heap of longs. */
    private static final class LongHeap {
        long[] a;
        int n;

        LongHeap(int cap) {
            a = new long[Math.max(16, cap)];
        }

        boolean isEmpty() {
            return n == 0;
        }

        void push(long v) {
            if (n == a.length) a = Arrays.copyOf(a, n * 2);
            int i = n++;
            while (i > 0) {
                int p = (i - 1) >>> 1;
                if (a[p] <= v) break;
                a[i] = a[p];
                i = p;
            }
            a[i] = v;
        }

        long pop() {
            long top = a[0], v = a[--n];
            int i = 0;
            while (true) {
                int c = 2 * i + 1;
                if (c >= n) break;
                if (c + 1 < n && a[c + 1] < a[c]) c++;
                if (a[c] >= v) break;
                a[i] = a[c];
                i = c;
            }
            a[i] = v;
            return top;
        }
    }

    private int rankOf(byte[] b, int from, int to) {
        int r = ranks.get(b, from, to - from);
        return r < 0 ? Integer.MAX_VALUE : r;
    }

    /**
     * Replaces every unpaired UTF-16 surrogate with U+FFFD; returns the same string when it has none.
     * This is the text that is actually encoded.
     */
    public static String sanitize(String text) {
        int n = text.length();
        int i = 0;
        for (; i < n; i++) {
            char c = text.charAt(i);
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(text.charAt(i + 1))) {
                    i++;
                    continue;
                }
                break;
            }
        }
        if (i == n) return text;
        StringBuilder sb = new StringBuilder(n).append(text, 0, i);
        for (; i < n; i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(text.charAt(i + 1))) {
                sb.append(c).append(text.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                sb.append('\uFFFD');
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    // ---------------------------------------------------------------- decoding

    /** The bytes of one token; a special token gives the UTF-8 of its name. Throws for ids outside the vocabulary. */
    public byte[] tokenBytes(int id) {
        if (id >= 0 && id < NUM_RANKS) return rankBytes[id].clone();
        if (id >= NUM_RANKS && id < VOCAB_SIZE) return specialNames[id - NUM_RANKS].getBytes(StandardCharsets.UTF_8);
        throw new IllegalArgumentException("token id " + id + " outside the vocabulary [0, " + VOCAB_SIZE + ")");
    }

    /** Concatenated bytes of the tokens (special tokens as their names). Throws for ids outside the vocabulary. */
    public byte[] decodeBytes(int... ids) {
        ByteBuf out = new ByteBuf(ids.length * 4);
        for (int id : ids) appendTokenBytes(id, out);
        return out.toArray();
    }

    void appendTokenBytes(int id, ByteBuf out) {
        if (id >= 0 && id < NUM_RANKS) out.add(rankBytes[id]);
        else if (id >= NUM_RANKS && id < VOCAB_SIZE)
            out.add(specialNames[id - NUM_RANKS].getBytes(StandardCharsets.UTF_8));
        else throw new IllegalArgumentException("token id " + id + " outside the vocabulary [0, " + VOCAB_SIZE + ")");
    }

    /** Decodes to text; invalid UTF-8 (e.g. a character cut off at the end) becomes U+FFFD. */
    public String decode(int... ids) {
        return new String(decodeBytes(ids), StandardCharsets.UTF_8);
    }

    /** A decoder for tokens that arrive one at a time; see {@link StreamingDecoder}. */
    public StreamingDecoder newStreamingDecoder() {
        return new StreamingDecoder(this);
    }

    // ---------------------------------------------------------------- specials

    public boolean isSpecial(int id) {
        return id >= NUM_RANKS && id < VOCAB_SIZE;
    }

    /** The special token's name ({@code "<|start|>"}), or empty for ordinary ids and ids outside the vocabulary. */
    public Optional<String> specialName(int id) {
        return isSpecial(id) ? Optional.of(specialNames[id - NUM_RANKS]) : Optional.empty();
    }

    /** The id of a special-token name, e.g. {@code "<|call|>"} → 200012. */
    public OptionalInt specialId(String name) {
        Integer id = specialIds.get(name);
        return id == null ? OptionalInt.empty() : OptionalInt.of(id);
    }

    /** All special-token names with their ids, in id order. */
    public Map<String, Integer> specialTokens() {
        return specialIds;
    }

    /** The id of an ordinary token's exact bytes, or -1. */
    public int rankOf(byte[] bytes) {
        return ranks.get(bytes, 0, bytes.length);
    }

    // ---------------------------------------------------------------- helpers

    /** Open-addressing hash map from byte strings (slices) to ranks; no allocation on lookup. */
    private static final class RankMap {
        private final byte[][] keys;
        private final int[] slots;
        private final int mask;

        RankMap(byte[][] keys) {
            this.keys = keys;
            int cap = Integer.highestOneBit(keys.length * 2 - 1) << 1;
            slots = new int[cap];
            Arrays.fill(slots, -1);
            mask = cap - 1;
            for (int id = 0; id < keys.length; id++) {
                int h = hash(keys[id], 0, keys[id].length) & mask;
                while (slots[h] >= 0) h = (h + 1) & mask;
                slots[h] = id;
            }
        }

        static int hash(byte[] b, int off, int len) {
            int h = 0x9E3779B9 ^ len;
            for (int i = off; i < off + len; i++) h = (h ^ b[i]) * 0x01000193;
            return h ^ (h >>> 15);
        }

        int get(byte[] b, int off, int len) {
            int h = hash(b, off, len) & mask;
            while (true) {
                int id = slots[h];
                if (id < 0) return -1;
                byte[] k = keys[id];
                if (k.length == len && Arrays.equals(k, 0, len, b, off, off + len)) return id;
                h = (h + 1) & mask;
            }
        }
    }

    static final class IntBuf {
        int[] a;
        int n;

        IntBuf(int cap) {
            a = new int[Math.max(1, cap)];
        }

        void add(int v) {
            if (n == a.length) a = Arrays.copyOf(a, n * 2);
            a[n++] = v;
        }

        int[] toArray() {
            return Arrays.copyOf(a, n);
        }
    }

    static final class ByteBuf {
        byte[] a;
        int n;

        ByteBuf(int cap) {
            a = new byte[Math.max(16, cap)];
        }

        void add(byte[] b) {
            if (n + b.length > a.length) a = Arrays.copyOf(a, Math.max(a.length * 2, n + b.length));
            System.arraycopy(b, 0, a, n, b.length);
            n += b.length;
        }

        byte[] toArray() {
            return Arrays.copyOf(a, n);
        }
    }
}
