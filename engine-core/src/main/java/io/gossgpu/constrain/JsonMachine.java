package io.gossgpu.constrain;

import java.util.ArrayList;
import java.util.List;

/**
 * A byte-level pushdown matcher for a {@link JsonGrammar}: it reads a JSON document one byte at a time and dies
 * (returns null) on the first byte that no document of the grammar can continue with. Every live state can still be
 * completed, so a decoder that only ever picks bytes keeping the state alive always ends with a valid document.
 *
 * <p>A state is an immutable {@link Stack} of frames (records, so states compare by value and can key a cache), or a
 * {@code List<Stack>} while {@code anyOf} alternatives are followed side by side. Stepping never changes a state.
 * The matcher writes valid UTF-8 only, numbers of at most {@link #MAX_DIGITS} digits per part, and bounded
 * whitespace, so that a model cannot spend its budget on blanks: none before or after the document, and between two
 * tokens nothing, one space, or one newline followed by at most {@link #INDENT} spaces per enclosing object or array
 * (enough for two- and four-space pretty printing). An object with free keys ({@code json_object}, or
 * {@code additionalProperties} without declared properties) takes each key once.
 */
public final class JsonMachine {
    static final int INDENT = 4;
    static final int MAX_DIGITS = 15;
    static final JsonGrammar.StringNode FREE_STRING = new JsonGrammar.StringNode(0, Integer.MAX_VALUE);
    static final JsonGrammar.NumberNode NUMBER = new JsonGrammar.NumberNode(false);
    private static final JsonGrammar.AnyValue ANY = new JsonGrammar.AnyValue();
    private static final JsonGrammar.ObjectNode ANY_OBJECT =
            new JsonGrammar.ObjectNode(List.of(), ANY, new KeyTrie(List.of()));
    private static final JsonGrammar.ArrayNode ANY_ARRAY = new JsonGrammar.ArrayNode(ANY, 0, Integer.MAX_VALUE);
    private static final JsonGrammar.Literals TRUE_FALSE_NULL =
            new JsonGrammar.Literals(new KeyTrie(List.of("true".getBytes(), "false".getBytes(), "null".getBytes())));

    private JsonMachine() {}

    /** One level of the stack. */
    public record Stack(Frame top, Stack rest) {}

    /** What one nesting level is in the middle of. */
    public sealed interface Frame {
        /** The state after byte {@code b} (0..255), with {@code rest} below this frame; null when {@code b} cannot come next. */
        Object step(int b, Stack rest);

        /** Whether the value this frame reads may end here (for numbers and literals: before a byte they do not take). */
        default boolean complete() {
            return false;
        }
    }

    /** The state before the first byte of a document of {@code grammar}. */
    public static Stack start(JsonGrammar grammar) {
        return new Stack(new Root(grammar, false, 0), null);
    }

    /** The state after {@code b}, or null when {@code b} cannot come next. */
    public static Object step(Object state, int b) {
        if (state instanceof Stack s) return s.top.step(b, s.rest);
        Object out = null;
        for (Object s : (List<?>) state) out = merge(out, step(s, b));
        return out;
    }

    /** The state after all of {@code bytes}, or null. */
    public static Object step(Object state, byte[] bytes) {
        for (int i = 0; i < bytes.length && state != null; i++) state = step(state, bytes[i] & 0xff);
        return state;
    }

    /** Whether the document may end in {@code state} (it holds a complete value, and at most trailing whitespace). */
    public static boolean canEnd(Object state) {
        if (state instanceof Stack s) return endable(s);
        for (Object s : (List<?>) state) if (endable((Stack) s)) return true;
        return false;
    }

    private static boolean endable(Stack s) {
        if (s.top instanceof Root r) return r.done;
        return (s.top instanceof Number || s.top instanceof Literal) && s.top.complete() && endable(s.rest);
    }

    /** Whether {@code b} is inside a plain string stretch in {@code state}: null if not, else the string frame. */
    static Str plainString(Object state) {
        return state instanceof Stack s && s.top instanceof Str str && str.pending == 0 ? str : null;
    }

    static Object merge(Object a, Object b) {
        if (a == null) return b;
        if (b == null) return a;
        List<Stack> all = new ArrayList<>();
        addAll(all, a);
        addAll(all, b);
        return all.size() == 1 ? all.getFirst() : List.copyOf(all);
    }

    private static void addAll(List<Stack> all, Object s) {
        if (s instanceof Stack one) {
            if (!all.contains(one)) all.add(one);
        } else {
            for (Object o : (List<?>) s) if (!all.contains(o)) all.add((Stack) o);
        }
    }

    static boolean isWs(int b) {
        return b == ' ' || b == '\n' || b == '\t' || b == '\r';
    }

    /**
     * The whitespace count after blank {@code b} in a container frame whose count is {@code ws} (0: none yet, 1: one
     * space, 2 + k: a newline and k spaces), with {@code rest} below that frame; -1 when {@code b} may not come.
     */
    static int blank(int ws, int b, Stack rest) {
        if (ws == 0) return b == ' ' ? 1 : b == '\n' ? 2 : -1;
        if (ws == 1 || b != ' ') return -1;
        int depth = 1;
        for (Stack s = rest; s != null; s = s.rest) if (s.top instanceof Obj || s.top instanceof Arr) depth++;
        return ws - 1 <= INDENT * depth ? ws + 1 : -1;
    }

    private static boolean isDigit(int b) {
        return b >= '0' && b <= '9';
    }

    /** The state after {@code b}, the first byte of a value of {@code g}, with {@code parent} (already past the value) below. */
    static Object startValue(JsonGrammar g, int b, Stack parent) {
        if (g instanceof JsonGrammar.Ref r) g = r.resolved();
        switch (g) {
            case JsonGrammar.AnyOf a -> {
                Object out = null;
                for (JsonGrammar alt : a.alternatives()) out = merge(out, startValue(alt, b, parent));
                return out;
            }
            case JsonGrammar.ObjectNode o -> {
                return b == '{' ? new Stack(new Obj(o, Obj.OPEN, 0, 0), parent) : null;
            }
            case JsonGrammar.ArrayNode a -> {
                return b == '[' ? new Stack(new Arr(a, Arr.OPEN, 0, 0), parent) : null;
            }
            case JsonGrammar.StringNode s -> {
                if (b != '"') return null;
                return new Stack(
                        s.pattern() == null
                                ? new Str(s, 0, 0)
                                : new PatternStr(s, 0, s.pattern().start(), 0, 0, 0, false),
                        parent);
            }
            case JsonGrammar.NumberNode n -> {
                if (b == '-') return new Stack(new Number(n.integer(), Number.MINUS, 0), parent);
                if (b == '0') return new Stack(new Number(n.integer(), Number.ZERO, 1), parent);
                if (b >= '1' && b <= '9') return new Stack(new Number(n.integer(), Number.INT, 1), parent);
                return null;
            }
            case JsonGrammar.Literals l -> {
                int c = l.trie().child(0, b);
                return c < 0 ? null : literalAt(l.trie(), c, parent);
            }
            case JsonGrammar.AnyValue any -> {
                return switch (b) {
                    case '{' -> startValue(ANY_OBJECT, b, parent);
                    case '[' -> startValue(ANY_ARRAY, b, parent);
                    case '"' -> startValue(FREE_STRING, b, parent);
                    case 't', 'f', 'n' -> startValue(TRUE_FALSE_NULL, b, parent);
                    default -> startValue(NUMBER, b, parent);
                };
            }
            case JsonGrammar.Ref r -> throw new IllegalStateException("unresolved " + r);
        }
    }

    private static Object literalAt(KeyTrie trie, int node, Stack parent) {
        if (trie.end(node) >= 0 && !trie.hasChildren(node)) return parent;
        return new Stack(new Literal(trie, node), parent);
    }

    /** A value that ended before {@code b}: {@code b} goes to the frame below. */
    private static Object handOn(int b, Stack rest) {
        return rest.top.step(b, rest.rest);
    }

    /** The whole document: the value alone ({@code ws} is always 0). */
    record Root(JsonGrammar grammar, boolean done, int ws) implements Frame {
        @Override
        public Object step(int b, Stack rest) {
            if (done || isWs(b)) return null;
            return startValue(grammar, b, new Stack(new Root(grammar, true, 0), rest));
        }

        @Override
        public boolean complete() {
            return done;
        }
    }

    /** An object: {@code index} is the next property that may come (OPEN, KEY, AFTER) or the one being read (COLON, VALUE). */
    record Obj(JsonGrammar.ObjectNode node, int phase, int index, int ws, List<String> keys) implements Frame {
        static final int OPEN = 0, KEY = 1, COLON = 2, VALUE = 3, AFTER = 4;

        Obj(JsonGrammar.ObjectNode node, int phase, int index, int ws) {
            this(node, phase, index, ws, List.of());
        }

        @Override
        public Object step(int b, Stack rest) {
            if (isWs(b)) {
                int w = blank(ws, b, rest);
                return w < 0 ? null : new Stack(new Obj(node, phase, index, w, keys), rest);
            }
            boolean free = node.properties().isEmpty();
            int n = node.properties().size();
            switch (phase) {
                case OPEN, KEY -> {
                    if (b == '}' && phase == OPEN) return node.nextRequired(0) == n ? rest : null;
                    if (b != '"') return null;
                    if (free) return node.extra() == null ? null : new Stack(new FreeKey(node, keys, "", 0), rest);
                    return index < n ? new Stack(new Key(node, index, 0), rest) : null;
                }
                case COLON -> {
                    return b == ':' ? new Stack(new Obj(node, VALUE, index, 0, keys), rest) : null;
                }
                case VALUE -> {
                    JsonGrammar value =
                            free ? node.extra() : node.properties().get(index).value();
                    return startValue(value, b, new Stack(new Obj(node, AFTER, free ? 0 : index + 1, 0, keys), rest));
                }
                default -> {
                    if (b == ',') return free || index < n ? new Stack(new Obj(node, KEY, index, 0, keys), rest) : null;
                    if (b == '}') return free || node.nextRequired(index) == n ? rest : null;
                    return null;
                }
            }
        }
    }

    /**
     * A free key after its opening quote: the bytes read so far ({@code text}, one char per byte) and the keys the
     * object already has; the closing quote is refused when it would repeat one (keys compare as written, so
     * {@code "a"} and {@code "\u0061"} count as two). {@code pending} as in {@link Str}.
     */
    record FreeKey(JsonGrammar.ObjectNode node, List<String> keys, String text, int pending) implements Frame {
        @Override
        public Object step(int b, Stack rest) {
            if (pending == 0 && b == '"') {
                if (keys.contains(text)) return null;
                List<String> more = new ArrayList<>(keys);
                more.add(text);
                return new Stack(new Obj(node, Obj.COLON, 0, 0, List.copyOf(more)), rest);
            }
            Object s = new Str(FREE_STRING, 0, pending).step(b, rest);
            if (s == null) return null;
            return new Stack(new FreeKey(node, keys, text + (char) b, ((Str) ((Stack) s).top).pending), rest);
        }

        /** The same key read as a free string whose close goes where this one's would with no key repeated. */
        Stack asString(Stack rest) {
            return new Stack(new Str(FREE_STRING, 0, 0), new Stack(new Obj(node, Obj.COLON, 0, 0, keys), rest));
        }
    }

    /** A declared key after its opening quote: {@code trieNode} in the object's key trie, any property from {@code from} on up to the next required one. */
    record Key(JsonGrammar.ObjectNode node, int from, int trieNode) implements Frame {
        @Override
        public Object step(int b, Stack rest) {
            KeyTrie keys = node.keys();
            int c = keys.child(trieNode, b);
            if (c < 0) return null;
            int last = Math.min(node.nextRequired(from), node.properties().size() - 1);
            if (!keys.reaches(c, from, last)) return null;
            int chosen = keys.end(c);
            if (chosen >= 0) return new Stack(new Obj(node, Obj.COLON, chosen, 0), rest);
            return new Stack(new Key(node, from, c), rest);
        }
    }

    record Arr(JsonGrammar.ArrayNode node, int phase, int count, int ws) implements Frame {
        static final int OPEN = 0, NEXT = 1, AFTER = 2;

        @Override
        public Object step(int b, Stack rest) {
            if (isWs(b)) {
                int w = blank(ws, b, rest);
                return w < 0 ? null : new Stack(new Arr(node, phase, count, w), rest);
            }
            if (phase == AFTER) {
                if (b == ',') return count < node.maxItems() ? new Stack(new Arr(node, NEXT, count, 0), rest) : null;
                if (b == ']') return count >= node.minItems() ? rest : null;
                return null;
            }
            if (phase == OPEN && b == ']') return node.minItems() == 0 ? rest : null;
            if (phase == OPEN && node.maxItems() == 0) return null;
            return startValue(node.items(), b, new Stack(new Arr(node, AFTER, count + 1, 0), rest));
        }
    }

    /**
     * A string after its opening quote: {@code count} code points so far (kept 0 for a string without limits, so that
     * its state does not change along plain text); {@code pending}: 0 plain, 1 after a backslash, 2..5 inside
     * {@code \\uXXXX} (hex digits still due: 6 − pending), 6..8 inside a UTF-8 sequence (continuation bytes due:
     * pending − 5), 9..12 after a lead byte whose next byte has a narrower range (E0, ED, F0, F4: no overlong forms,
     * surrogates or code points past U+10FFFF, which a decoder would turn into replacement characters), 13..21 along
     * a surrogate pair written as two escapes (13: after {@code \\uD}; 14, 15: high half, hex digits due; 16..19:
     * the low half's {@code \\}, {@code u}, {@code D}, {@code C..F}; 20, 21: its last hex digits). A pair is one
     * code point, as JSON Schema counts lengths; a lone surrogate is refused (it is no character).
     */
    record Str(JsonGrammar.StringNode node, int count, int pending) implements Frame {
        @Override
        public Object step(int b, Stack rest) {
            if (pending == 0) {
                if (b == '"') return count >= node.minLength() ? rest : null;
                if (b < 0x20) return null;
                int p = b == '\\'
                        ? 1
                        : b < 0x80
                                ? 0
                                : b >= 0xc2 && b <= 0xdf
                                        ? 6
                                        : b == 0xe0
                                                ? 9
                                                : b == 0xed
                                                        ? 10
                                                        : b >= 0xe1 && b <= 0xef
                                                                ? 7
                                                                : b == 0xf0
                                                                        ? 11
                                                                        : b == 0xf4
                                                                                ? 12
                                                                                : b >= 0xf1 && b <= 0xf3 ? 8 : -1;
                if (p < 0) return null; // a continuation byte without a lead, or a byte UTF-8 never uses
                if (count >= node.maxLength()) return null;
                int next = node.free() ? 0 : count + 1;
                return p == 0 && next == count ? new Stack(this, rest) : new Stack(new Str(node, next, p), rest);
            }
            if (pending == 1) {
                if (b == 'u') return new Stack(new Str(node, count, 2), rest);
                return "\"\\/bfnrt".indexOf(b) >= 0 ? new Stack(new Str(node, count, 0), rest) : null;
            }
            boolean hex = isDigit(b) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F');
            if (pending <= 5) {
                if (pending == 2 && (b == 'd' || b == 'D')) return new Stack(new Str(node, count, 13), rest);
                return hex ? new Stack(new Str(node, count, pending == 5 ? 0 : pending + 1), rest) : null;
            }
            if (pending >= 13) {
                int next = switch (pending) {
                    case 13 ->
                        isDigit(b) && b <= '7'
                                ? 4
                                : (b >= '8' && b <= '9') || (b >= 'a' && b <= 'b') || (b >= 'A' && b <= 'B') ? 14 : -1;
                    case 14, 20 -> hex ? pending + 1 : -1;
                    case 15 -> hex ? 16 : -1;
                    case 16 -> b == '\\' ? 17 : -1;
                    case 17 -> b == 'u' ? 18 : -1;
                    case 18 -> b == 'd' || b == 'D' ? 19 : -1;
                    case 19 -> (b >= 'c' && b <= 'f') || (b >= 'C' && b <= 'F') ? 20 : -1;
                    default -> hex ? 0 : -1; // 21
                };
                return next < 0 ? null : new Stack(new Str(node, count, next), rest);
            }
            int lo = pending == 9 ? 0xa0 : pending == 11 ? 0x90 : 0x80;
            int hi = pending == 10 ? 0x9f : pending == 12 ? 0x8f : 0xbf;
            if (b < lo || b > hi) return null;
            int next = pending == 6 ? 0 : pending <= 8 ? pending - 1 : pending <= 10 ? 6 : 7;
            return new Stack(new Str(node, count, next), rest);
        }
    }

    /** {@code s} (a string at a plain stretch) with its string read as one without limits: the same frames below. */
    static Stack freeString(Stack s) {
        return new Stack(new Str(FREE_STRING, 0, 0), s.rest);
    }

    /**
     * The characters {@code b} adds to a string it starts inside of (at a plain stretch), counted as a limited string
     * counts them (an escape is one): that count when {@code b} stays inside (or dies there), or −count−1 when it
     * closes the string with a quote (what follows is not counted).
     */
    static int stringChars(byte[] b) {
        Stack bottom = new Stack(new Root(FREE_STRING, true, 0), null);
        JsonGrammar.StringNode counting = new JsonGrammar.StringNode(0, Integer.MAX_VALUE - 1);
        Object s = new Stack(new Str(counting, 0, 0), bottom);
        int count = 0;
        for (byte x : b) {
            Object next = step(s, x & 0xff);
            if (next == bottom) return -count - 1;
            if (next == null) return count;
            s = next;
            count = ((Str) ((Stack) s).top).count;
        }
        return count;
    }

    /**
     * How many leading bytes of {@code b} are plain string content by {@link #plainChars}'s rule (whole characters,
     * no quote, backslash or control character): a free string takes them without changing its state.
     */
    static int plainPrefix(byte[] b) {
        Stack bottom = new Stack(new Root(FREE_STRING, true, 0), null);
        Object s = new Stack(new Str(FREE_STRING, 0, 0), bottom);
        int whole = 0;
        for (int i = 0; i < b.length; i++) {
            int c = b[i] & 0xff;
            if (c == '"' || c == '\\') break;
            s = step(s, c);
            if (s == null) break;
            if (((Str) ((Stack) s).top).pending == 0) whole = i + 1;
        }
        return whole;
    }

    /**
     * The code points of {@code b} when it is plain string content on its own (whole UTF-8 characters, no quote,
     * backslash or control character), by this matcher's own rules; else -1.
     */
    static int plainChars(byte[] b) {
        Stack bottom = new Stack(new Root(FREE_STRING, true, 0), null);
        Object s = new Stack(new Str(FREE_STRING, 0, 0), bottom);
        int chars = 0;
        for (byte x : b) {
            int c = x & 0xff;
            if (c == '"' || c == '\\') return -1;
            s = step(s, c);
            if (s == null) return -1;
            if ((c & 0xc0) != 0x80) chars++;
        }
        return ((Str) ((Stack) s).top).pending == 0 ? chars : -1;
    }

    /**
     * A string with a {@code pattern} after its opening quote: {@code count} code points read (kept 0 without length
     * limits, so that frames repeat and the masker can cache by frame), and where it is between characters as
     * {@link PatternFrames} describes ({@code q, acc, left, len, esc}), whose step it takes.
     */
    record PatternStr(JsonGrammar.StringNode node, int count, int q, int acc, int left, int len, boolean esc)
            implements Frame {
        @Override
        public Object step(int b, Stack rest) {
            StringPattern p = node.pattern();
            if (b == '"' && !esc && left == 0) return p.canEnd(q, count) ? rest : null;
            long f = PatternFrames.step(p, count, frame(), b);
            if (f == PatternFrames.DEAD) return null;
            boolean limited = node.minLength() > 0 || node.maxLength() != Integer.MAX_VALUE;
            return new Stack(of(node, PatternFrames.whole(f) && limited ? count + 1 : count, f), rest);
        }

        /** Whether this frame can still become an accepted string ({@link PatternFrames#completable}). */
        boolean completable() {
            return PatternFrames.completable(node.pattern(), count, frame());
        }

        /** This frame with {@code count} code points read. */
        PatternStr at(int count) {
            return new PatternStr(node, count, q, acc, left, len, esc);
        }

        /** Where it is between characters, packed ({@link PatternFrames}). */
        long frame() {
            return PatternFrames.of(q, acc, left, len, esc);
        }

        /** The frame of {@code node} at packed {@code f} after {@code count} code points. */
        static PatternStr of(JsonGrammar.StringNode node, int count, long f) {
            return new PatternStr(
                    node,
                    count,
                    PatternFrames.q(f),
                    PatternFrames.acc(f),
                    PatternFrames.left(f),
                    PatternFrames.len(f),
                    PatternFrames.esc(f));
        }
    }

    /** A number: {@code digits} read in the current part. */
    record Number(boolean integer, int phase, int digits) implements Frame {
        static final int MINUS = 0, ZERO = 1, INT = 2, DOT = 3, FRAC = 4, E = 5, ESIGN = 6, EXP = 7;
        private static final int MAX_EXP_DIGITS = 3;

        @Override
        public Object step(int b, Stack rest) {
            boolean digit = isDigit(b);
            switch (phase) {
                case MINUS -> {
                    if (b == '0') return next(ZERO, 1, rest);
                    return digit ? next(INT, 1, rest) : null;
                }
                case ZERO, INT, FRAC -> {
                    if (digit && phase != ZERO) return digits < MAX_DIGITS ? next(phase, digits + 1, rest) : null;
                    if (b == '.' && phase != FRAC && !integer) return next(DOT, 0, rest);
                    if ((b == 'e' || b == 'E') && !integer) return next(E, 0, rest);
                    return handOn(b, rest);
                }
                case DOT -> {
                    return digit ? next(FRAC, 1, rest) : null;
                }
                case E -> {
                    if (b == '+' || b == '-') return next(ESIGN, 0, rest);
                    return digit ? next(EXP, 1, rest) : null;
                }
                case ESIGN -> {
                    return digit ? next(EXP, 1, rest) : null;
                }
                default -> {
                    if (digit) return digits < MAX_EXP_DIGITS ? next(EXP, digits + 1, rest) : null;
                    return handOn(b, rest);
                }
            }
        }

        private Stack next(int phase, int digits, Stack rest) {
            return new Stack(new Number(integer, phase, digits), rest);
        }

        @Override
        public boolean complete() {
            return phase == ZERO || phase == INT || phase == FRAC || phase == EXP;
        }
    }

    /** Part of one of a fixed set of JSON texts, at {@code node} of their trie. */
    record Literal(KeyTrie trie, int node) implements Frame {
        @Override
        public Object step(int b, Stack rest) {
            int c = trie.child(node, b);
            if (c >= 0) return literalAt(trie, c, rest);
            return trie.end(node) >= 0 ? handOn(b, rest) : null;
        }

        @Override
        public boolean complete() {
            return trie.end(node) >= 0;
        }
    }
}
