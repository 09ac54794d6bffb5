package io.gossgpu.constrain;

/**
 * Where a patterned string is between its quotes, packed in a long (the character count kept aside): the pattern
 * automaton's state {@code q}; inside a character, its bits so far ({@code acc}) with {@code left} UTF-8 continuation
 * bytes due of {@code len}; or {@code esc} after a backslash. The one byte step of a patterned string's inside, shared
 * by {@link JsonMachine.PatternStr} and {@link TokenMasker}'s pattern walks (which step millions of trie nodes and must
 * not allocate). Escapes are the short ones ({@code \\" \\\\ \\/ \\b \\f \\n \\r \\t}); no {@code \\u}. A byte is
 * taken only when some character it can begin or continue keeps the pattern and the length limits completable.
 */
final class PatternFrames {
    /** No frame: the byte cannot come next. */
    static final long DEAD = -1;

    private static final int[] ESCAPED = {'"', '\\', '/', 8, 12, 10, 13, 9};
    private static final String ESCAPES = "\"\\/bfnrt";

    private PatternFrames() {}

    /** Layout: q in bits 32..47, acc 8..31, left 5..6, len 1..4, esc 0 (a count, when kept beside, goes above 48). */
    static long of(int q, int acc, int left, int len, boolean esc) {
        return (long) q << 32 | (long) acc << 8 | left << 5 | len << 1 | (esc ? 1 : 0);
    }

    static int q(long f) {
        return (int) (f >>> 32 & 0xffff);
    }

    static int acc(long f) {
        return (int) (f >>> 8 & 0xffffff);
    }

    static int left(long f) {
        return (int) (f >>> 5 & 3);
    }

    static int len(long f) {
        return (int) (f >>> 1 & 15);
    }

    static boolean esc(long f) {
        return (f & 1) != 0;
    }

    /** Whether {@code f} lies between whole characters (so the step that led to it read one more character). */
    static boolean whole(long f) {
        return (f & 0xffffffffL) == 0;
    }

    /**
     * The frame after byte {@code b} in frame {@code f} of a string of pattern {@code p} that has read {@code count}
     * characters, or {@link #DEAD}. A closing quote (at a whole frame) is the caller's to handle: DEAD here.
     */
    static long step(StringPattern p, int count, long f, int b) {
        int q = q(f);
        if (esc(f)) {
            int i = ESCAPES.indexOf(b);
            return i < 0 ? DEAD : advance(p, count, q, ESCAPED[i]);
        }
        int left = left(f);
        if (left > 0) {
            if ((b & 0xc0) != 0x80) return DEAD;
            return partial(p, count, q, acc(f) << 6 | (b & 0x3f), left - 1, len(f));
        }
        if (b < 0x80 && b >= 0x20 && b != '"' && b != '\\') return advance(p, count, q, b);
        if (b == '\\') {
            for (int cp : ESCAPED) if (p.anyLive(q, count + 1, cp, cp)) return of(q, 0, 0, 0, true);
            return DEAD;
        }
        int n = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
        if (n == 0)
            return DEAD; // a quote, a control byte, a continuation byte without a lead, or a byte UTF-8 never uses
        return partial(p, count, q, b & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07), n - 1, n);
    }

    /**
     * Whether frame {@code f} after {@code count} characters can still become a string that the pattern and the
     * length limits accept: the check the byte that led there passed (a whole character: its state is live at this
     * count; inside a character or after a backslash: some character it can still become is). A frame that passes it
     * passed every earlier check on its way, since the limits only bound the count (see TokenMasker's pattern walks).
     */
    static boolean completable(StringPattern p, int count, long f) {
        int q = q(f), left = left(f);
        if (esc(f)) {
            for (int cp : ESCAPED) if (p.anyLive(q, count + 1, cp, cp)) return true;
            return false;
        }
        if (left == 0) return p.live(q, count);
        int acc = acc(f), len = len(f);
        int lo = Math.max(acc << (6 * left), len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000);
        int hi = Math.min(acc << (6 * left) | ((1 << (6 * left)) - 1), len == 2 ? 0x7ff : len == 3 ? 0xffff : 0x10ffff);
        return lo <= hi && p.anyLive(q, count + 1, lo, hi);
    }

    /** After a byte of an {@code n}-byte character: its bits {@code a}, {@code l} bytes still due. */
    private static long partial(StringPattern p, int count, int q, int a, int l, int n) {
        int lo = a << (6 * l), hi = lo | ((1 << (6 * l)) - 1);
        lo = Math.max(lo, n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000); // no overlong forms
        hi = Math.min(hi, n == 2 ? 0x7ff : n == 3 ? 0xffff : 0x10ffff);
        if (lo > hi) return DEAD;
        if (l == 0) return advance(p, count, q, a); // surrogates belong to no class of the pattern
        if (!p.anyLive(q, count + 1, lo, hi)) return DEAD;
        return of(q, a, l, n, false);
    }

    private static long advance(StringPattern p, int count, int q, int cp) {
        int t = p.step(q, cp);
        return t < 0 || !p.live(t, count + 1) ? DEAD : (long) t << 32;
    }
}
