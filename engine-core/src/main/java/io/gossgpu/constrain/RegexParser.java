package io.gossgpu.constrain;

import io.gossgpu.GossException;
import io.gossgpu.constrain.GbnfParser.Alt;
import io.gossgpu.constrain.GbnfParser.Chars;
import io.gossgpu.constrain.GbnfParser.Expr;
import io.gossgpu.constrain.GbnfParser.Repeat;
import io.gossgpu.constrain.GbnfParser.Seq;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a JSON Schema {@code pattern} (the practical subset of the regular expressions JSON Schema validators run:
 * literals, {@code .}, classes {@code [a-z]} and {@code [^...]}, {@code \d \w \s \D \W \S}, escaped metacharacters,
 * {@code \t \n \r \f \v \xHH \\uHHHH}, groups {@code ( )} and {@code (?: )}, alternation, {@code * + ? {m} {m,} {m,n}}
 * (lazy forms too: the same strings match), and anchors {@code ^ $} at the start and end of a top-level alternative)
 * into an {@link Expr} over code points. A pattern matches when it matches some part of the string, so an
 * alternative without {@code ^} starts with any text and one without {@code $} ends with any text. Everything else
 * (lookaround, backreferences, word boundaries, flags, Unicode properties, nested classes) is refused with a
 * one-line {@link GossException}, so a reply never silently breaks its pattern.
 *
 * <p>{@code .} leaves out the line terminators of both Java and ECMAScript regexes (\n \r U+0085 U+2028 U+2029), and
 * {@code \s} is Java's {@code [ \t\n\x0B\f\r]}: where the two dialects differ, the smaller set is taken.
 */
final class RegexParser {
    static final int MAX_REPEAT = GbnfParser.MAX_REPEAT;
    private static final int[] DIGIT = CharRanges.of('0', '9');
    private static final int[] WORD = CharRanges.union(
            List.of(new int[] {'0', '9'}, new int[] {'A', 'Z'}, new int[] {'_', '_'}, new int[] {'a', 'z'}));
    private static final int[] SPACE = CharRanges.union(List.of(new int[] {'\t', '\r'}, new int[] {' ', ' '}));
    private static final int[] DOT = CharRanges.complement(CharRanges.union(List.of(
            new int[] {'\n', '\n'}, new int[] {'\r', '\r'}, new int[] {0x85, 0x85}, new int[] {0x2028, 0x2029})));

    private final int[] cps;
    private final String where;
    private int pos;

    private RegexParser(String pattern, String where) {
        this.cps = pattern.codePoints().toArray();
        this.where = where;
    }

    /** The strings {@code pattern} matches somewhere in, as one expression (anchors turned into any-text parts). */
    static Expr parse(String pattern, String where) {
        RegexParser p = new RegexParser(pattern, where);
        List<Expr> alternatives = new ArrayList<>();
        Expr anyText = new Repeat(new Chars(CharRanges.ANY), 0, -1);
        do {
            if (!alternatives.isEmpty()) p.pos++; // the '|'
            boolean start = p.pos < p.cps.length && p.cps[p.pos] == '^';
            if (start) p.pos++;
            List<Expr> items = new ArrayList<>();
            if (!start) items.add(anyText);
            items.add(p.sequence(true));
            boolean end = p.pos < p.cps.length && p.cps[p.pos] == '$';
            if (end) p.pos++;
            if (!end) items.add(anyText);
            alternatives.add(new Seq(items));
            if (p.pos < p.cps.length && p.cps[p.pos] != '|') {
                if (p.cps[p.pos] == ')') throw p.error("has a ')' without its '('");
                throw p.error("has '" + Character.toString(p.cps[p.pos])
                        + "' where it cannot be (anchors ^ and $ only at the start and end)");
            }
        } while (p.pos < p.cps.length);
        return alternatives.size() == 1 ? alternatives.getFirst() : new Alt(alternatives);
    }

    /** Items up to '|', ')', the end, or (at the top level) a '$' that ends the alternative. */
    private Expr sequence(boolean top) {
        List<Expr> items = new ArrayList<>();
        while (pos < cps.length) {
            int c = cps[pos];
            if (c == '|' || c == ')') break;
            if (c == '$') {
                if (top && pos + 1 == cps.length || top && cps[pos + 1] == '|') break;
                throw error("uses '$' inside the pattern (only at the end of an alternative)");
            }
            if (c == '^') throw error("uses '^' inside the pattern (only at the start of an alternative)");
            items.add(quantified(atom()));
        }
        return items.size() == 1 ? items.getFirst() : new Seq(items);
    }

    private Expr alternation() {
        List<Expr> options = new ArrayList<>();
        options.add(sequence(false));
        while (pos < cps.length && cps[pos] == '|') {
            pos++;
            options.add(sequence(false));
        }
        return options.size() == 1 ? options.getFirst() : new Alt(options);
    }

    private Expr atom() {
        int c = cps[pos];
        switch (c) {
            case '(' -> {
                int open = pos++;
                if (pos < cps.length && cps[pos] == '?') {
                    if (pos + 1 < cps.length && cps[pos + 1] == ':') pos += 2;
                    else
                        throw errorAt(
                                open,
                                "uses '(?', lookaround, named groups or flags, which constrained output does not support");
                }
                Expr inner = alternation();
                if (pos >= cps.length || cps[pos] != ')') throw errorAt(open, "has a '(' that is never closed");
                pos++;
                return inner;
            }
            case '[' -> {
                return charClass();
            }
            case '.' -> {
                pos++;
                return new Chars(DOT);
            }
            case '\\' -> {
                int[] set = escape(false);
                return new Chars(set);
            }
            case '*', '+', '?' -> throw error("has '" + Character.toString(c) + "' with nothing to repeat");
            case '{' -> throw error("has '{' that is not a repetition {m}, {m,} or {m,n} after something to repeat");
            default -> {
                pos++;
                return new Chars(CharRanges.of(c, c));
            }
        }
    }

    private Expr quantified(Expr e) {
        if (pos >= cps.length) return e;
        int c = cps[pos];
        int min, max;
        if (c == '*' || c == '+' || c == '?') {
            pos++;
            min = c == '+' ? 1 : 0;
            max = c == '?' ? 1 : -1;
        } else if (c == '{') {
            int open = pos++;
            min = number(open);
            max = min;
            if (pos < cps.length && cps[pos] == ',') {
                pos++;
                max = pos < cps.length && cps[pos] == '}' ? -1 : number(open);
            }
            if (pos >= cps.length || cps[pos] != '}')
                throw errorAt(open, "has a repetition that is not {m}, {m,} or {m,n}");
            pos++;
            if (max >= 0 && max < min)
                throw errorAt(open, "has a repetition {" + min + "," + max + "} whose bounds are reversed");
        } else return e;
        if (pos < cps.length && cps[pos] == '?') pos++; // lazy: the same strings match
        if (pos < cps.length && (cps[pos] == '+' || cps[pos] == '*' || cps[pos] == '?' || cps[pos] == '{'))
            throw error("repeats a repetition (possessive or doubled quantifier)");
        return new Repeat(e, min, max);
    }

    private int number(int open) {
        int start = pos;
        long v = 0;
        while (pos < cps.length && cps[pos] >= '0' && cps[pos] <= '9') {
            v = Math.min(v * 10 + cps[pos] - '0', Integer.MAX_VALUE);
            pos++;
        }
        if (pos == start) throw errorAt(open, "has a repetition that is not {m}, {m,} or {m,n}");
        if (v > MAX_REPEAT) throw errorAt(open, "repeats something " + v + " times (at most " + MAX_REPEAT + ")");
        return (int) v;
    }

    private Expr charClass() {
        int open = pos++;
        boolean negated = pos < cps.length && cps[pos] == '^';
        if (negated) pos++;
        List<int[]> ranges = new ArrayList<>();
        boolean first = true;
        while (true) {
            if (pos >= cps.length) throw errorAt(open, "has a '[' that is never closed");
            int c = cps[pos];
            if (c == ']' && !first) break;
            if (c == ']') throw errorAt(open, "has an empty class []");
            if (c == '[') throw error("has '[' inside a class (nested classes and && are not supported)");
            if (c == '&' && pos + 1 < cps.length && cps[pos + 1] == '&')
                throw error("has && inside a class (class intersections are not supported)");
            first = false;
            int[] lo = classItem();
            if (pos + 1 < cps.length && cps[pos] == '-' && cps[pos + 1] != ']') {
                int dash = pos++;
                int[] hi = classItem();
                if (!single(lo) || !single(hi)) throw errorAt(dash, "has a range whose end is a class like \\d");
                if (hi[0] < lo[0]) throw errorAt(dash, "has a reversed range");
                ranges.add(new int[] {lo[0], hi[0]});
            } else {
                for (int i = 0; i < lo.length; i += 2) ranges.add(new int[] {lo[i], lo[i + 1]});
            }
        }
        pos++;
        int[] set = CharRanges.union(ranges);
        return new Chars(negated ? CharRanges.complement(set) : set);
    }

    private static boolean single(int[] set) {
        return set.length == 2 && set[0] == set[1];
    }

    private int[] classItem() {
        if (cps[pos] == '\\') return escape(true);
        int c = cps[pos++];
        return new int[] {c, c};
    }

    /** The set an escape stands for (one code point, or a class such as {@code \d}). */
    private int[] escape(boolean inClass) {
        int at = pos++;
        if (pos >= cps.length) throw errorAt(at, "ends with a lone backslash");
        int c = cps[pos++];
        int cp = switch (c) {
            case 'd' -> -'d';
            case 'D' -> -'D';
            case 'w' -> -'w';
            case 'W' -> -'W';
            case 's' -> -'s';
            case 'S' -> -'S';
            case 't' -> '\t';
            case 'n' -> '\n';
            case 'r' -> '\r';
            case 'f' -> '\f';
            case 'v' -> 0x0B;
            case 'x' -> hex(at, 2);
            case 'u' -> hex(at, 4);
            case 'b', 'B' ->
                throw errorAt(
                        at,
                        inClass
                                ? "uses \\b in a class"
                                : "uses the word boundary \\" + Character.toString(c)
                                        + ", which constrained output does not support");
            case 'p', 'P' ->
                throw errorAt(
                        at,
                        "uses the Unicode property \\" + Character.toString(c)
                                + ", which constrained output does not support");
            case 'A', 'z', 'Z', 'G' ->
                throw errorAt(at, "uses the anchor \\" + Character.toString(c) + " (use ^ and $ at the ends)");
            default -> {
                if (c >= '0' && c <= '9' || c == 'k')
                    throw errorAt(at, "uses a backreference, which constrained output does not support");
                if (c < 0x80 && Character.isLetterOrDigit(c))
                    throw errorAt(
                            at,
                            "uses the escape \\" + Character.toString(c)
                                    + ", which constrained output does not support");
                yield c; // an escaped metacharacter or punctuation stands for itself
            }
        };
        return switch (cp) {
            case -'d' -> DIGIT;
            case -'D' -> CharRanges.complement(DIGIT);
            case -'w' -> WORD;
            case -'W' -> CharRanges.complement(WORD);
            case -'s' -> SPACE;
            case -'S' -> CharRanges.complement(SPACE);
            default -> new int[] {cp, cp};
        };
    }

    private int hex(int at, int digits) {
        int v = 0;
        for (int i = 0; i < digits; i++) {
            int d = pos < cps.length ? Character.digit(cps[pos], 16) : -1;
            if (d < 0) throw errorAt(at, "has an escape that needs " + digits + " hex digits");
            v = v * 16 + d;
            pos++;
        }
        return v;
    }

    private GossException error(String message) {
        return errorAt(pos, message);
    }

    private GossException errorAt(int at, String message) {
        return new GossException(
                "the JSON schema's pattern at " + where + " " + message + " (at character " + (at + 1) + ")");
    }
}
