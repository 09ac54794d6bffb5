package io.gossgpu.constrain;

import io.gossgpu.GossException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a GBNF grammar (the notation llama.cpp users write) into rules of {@link Expr}: {@code name ::= ...} rules,
 * alternation {@code |}, sequences, groups {@code ( )}, {@code * + ? {m} {m,} {m,n}}, string literals and character
 * classes (with {@code \n \r \t \\ \" \[ \] \- \xHH} and 4- or 8-digit u and U hex escapes), {@code .} for any character and
 * {@code #} comments. A rule runs until the next {@code name ::=} (so rules may span lines). Errors are one line
 * with the line:column where the text went wrong.
 */
final class GbnfParser {
    /** The largest repetition bound written as {@code {m,n}} (each unit expands to a rule). */
    static final int MAX_REPEAT = 1000;

    sealed interface Expr {}

    record Alt(List<Expr> options) implements Expr {}

    record Seq(List<Expr> items) implements Expr {}

    /** One code point from {@code ranges} (sorted, disjoint [lo, hi] pairs). */
    record Chars(int[] ranges) implements Expr {}

    record Ref(String name, String where) implements Expr {}

    /** {@code max < 0}: unbounded. */
    record Repeat(Expr body, int min, int max) implements Expr {}

    record Rule(String name, Expr body, String where) {}

    private final int[] cps;
    private int pos;

    private GbnfParser(String text) {
        this.cps = text.codePoints().toArray();
    }

    /** The rules of {@code text} in the order written. */
    static Map<String, Rule> parse(String text) {
        GbnfParser p = new GbnfParser(text);
        Map<String, Rule> rules = new LinkedHashMap<>();
        p.skipSpace();
        while (p.pos < p.cps.length) {
            String where = p.where(p.pos);
            String name = p.name();
            if (name == null) throw p.error("expected a rule name");
            p.skipSpace();
            if (!p.lookingAt("::=")) throw p.error("expected '::=' after rule name '" + name + "'");
            p.pos += 3;
            Expr body = p.alternatives(false);
            Rule old = rules.put(name, new Rule(name, body, where));
            if (old != null)
                throw new GossException(
                        "grammar " + where + ": rule '" + name + "' is defined twice (first at " + old.where() + ")");
        }
        return rules;
    }

    private Expr alternatives(boolean nested) {
        List<Expr> options = new ArrayList<>();
        options.add(sequence(nested));
        while (pos < cps.length && cps[pos] == '|') {
            pos++;
            options.add(sequence(nested));
        }
        return options.size() == 1 ? options.getFirst() : new Alt(options);
    }

    private Expr sequence(boolean nested) {
        List<Expr> items = new ArrayList<>();
        while (true) {
            skipSpace();
            if (pos >= cps.length) break;
            int c = cps[pos];
            if (c == '|') break;
            if (c == ')') {
                if (nested) break;
                throw error("unexpected ')'");
            }
            if (!nested && startsRule()) break;
            Expr item = primary();
            items.add(postfix(item));
        }
        return items.size() == 1 ? items.getFirst() : new Seq(items);
    }

    private Expr primary() {
        int c = cps[pos];
        if (c == '"') return literal();
        if (c == '[') return charClass();
        if (c == '.') {
            pos++;
            return new Chars(CharRanges.ANY);
        }
        if (c == '(') {
            int open = pos++;
            Expr inner = alternatives(true);
            skipSpace();
            if (pos >= cps.length || cps[pos] != ')') throw errorAt(open, "'(' is never closed");
            pos++;
            return inner;
        }
        String where = where(pos);
        String name = name();
        if (name != null) return new Ref(name, where);
        throw error("unexpected '" + Character.toString(c) + "'");
    }

    private Expr postfix(Expr item) {
        while (pos < cps.length) {
            int c = cps[pos];
            if (c == '*') item = new Repeat(item, 0, -1);
            else if (c == '+') item = new Repeat(item, 1, -1);
            else if (c == '?') item = new Repeat(item, 0, 1);
            else if (c == '{') {
                int open = pos++;
                skipBlanks();
                int min = number(open);
                skipBlanks();
                int max = min;
                if (pos < cps.length && cps[pos] == ',') {
                    pos++;
                    skipBlanks();
                    max = pos < cps.length && isDigit(cps[pos]) ? number(open) : -1;
                    skipBlanks();
                }
                if (pos >= cps.length || cps[pos] != '}')
                    throw error("expected '}' to close the repetition at " + where(open));
                if (max >= 0 && max < min)
                    throw errorAt(open, "repetition {" + min + "," + max + "} has its maximum below its minimum");
                item = new Repeat(item, min, max);
            } else break;
            pos++;
        }
        return item;
    }

    private int number(int open) {
        int start = pos;
        long v = 0;
        while (pos < cps.length && isDigit(cps[pos])) {
            v = v * 10 + (cps[pos++] - '0');
            if (v > MAX_REPEAT) throw errorAt(open, "repetition bound above " + MAX_REPEAT);
        }
        if (pos == start) throw error("expected a number in the repetition at " + where(open));
        return (int) v;
    }

    private Expr literal() {
        int open = pos++;
        List<Expr> chars = new ArrayList<>();
        while (true) {
            if (pos >= cps.length || cps[pos] == '\n') throw errorAt(open, "string is never closed");
            int c = cps[pos];
            if (c == '"') break;
            int cp = c == '\\' ? escape() : cps[pos++];
            chars.add(new Chars(CharRanges.of(cp, cp)));
        }
        pos++;
        return chars.size() == 1 ? chars.getFirst() : new Seq(chars);
    }

    private Expr charClass() {
        int open = pos++;
        boolean negated = pos < cps.length && cps[pos] == '^';
        if (negated) pos++;
        List<int[]> ranges = new ArrayList<>();
        while (true) {
            if (pos >= cps.length) throw errorAt(open, "character class is never closed");
            if (cps[pos] == ']') break;
            int lo = classChar();
            int hi = lo;
            if (pos + 1 < cps.length && cps[pos] == '-' && cps[pos + 1] != ']') {
                int dash = pos++;
                hi = classChar();
                if (hi < lo) throw errorAt(dash, "range " + show(lo) + "-" + show(hi) + " is reversed");
            }
            ranges.add(new int[] {lo, hi});
        }
        pos++;
        int[] set = CharRanges.union(ranges);
        return new Chars(negated ? CharRanges.complement(set) : set);
    }

    private int classChar() {
        return cps[pos] == '\\' ? escape() : cps[pos++];
    }

    private int escape() {
        int at = pos++;
        if (pos >= cps.length) throw errorAt(at, "escape at the end of the grammar");
        int c = cps[pos++];
        return switch (c) {
            case 'n' -> '\n';
            case 'r' -> '\r';
            case 't' -> '\t';
            case '\\', '"', '[', ']', '-', '^', '\'', '/' -> c;
            case 'x' -> hex(at, 2);
            case 'u' -> hex(at, 4);
            case 'U' -> hex(at, 8);
            default -> throw errorAt(at, "unknown escape '\\" + Character.toString(c) + "'");
        };
    }

    private int hex(int at, int digits) {
        long v = 0;
        for (int i = 0; i < digits; i++) {
            int d = pos < cps.length ? Character.digit(cps[pos], 16) : -1;
            if (d < 0) throw errorAt(at, "escape needs " + digits + " hex digits");
            v = v * 16 + d;
            pos++;
        }
        if (v > Character.MAX_CODE_POINT) throw errorAt(at, "escape is above U+10FFFF");
        return (int) v;
    }

    /** Whether the text here is {@code name ::=} (the next rule starts). */
    private boolean startsRule() {
        int save = pos;
        try {
            if (name() == null) return false;
            skipSpace();
            return lookingAt("::=");
        } finally {
            pos = save;
        }
    }

    private String name() {
        int start = pos;
        while (pos < cps.length && isNameChar(cps[pos])) pos++;
        return pos == start ? null : new String(cps, start, pos - start);
    }

    private static boolean isNameChar(int c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) || c == '-' || c == '_';
    }

    private static boolean isDigit(int c) {
        return c >= '0' && c <= '9';
    }

    private boolean lookingAt(String s) {
        if (pos + s.length() > cps.length) return false;
        for (int i = 0; i < s.length(); i++) if (cps[pos + i] != s.charAt(i)) return false;
        return true;
    }

    /** Skips blanks, newlines and comments. */
    private void skipSpace() {
        while (pos < cps.length) {
            int c = cps[pos];
            if (c == '#') {
                while (pos < cps.length && cps[pos] != '\n') pos++;
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') pos++;
            else break;
        }
    }

    private void skipBlanks() {
        while (pos < cps.length && (cps[pos] == ' ' || cps[pos] == '\t')) pos++;
    }

    private String where(int at) {
        int line = 1, col = 1;
        for (int i = 0; i < at && i < cps.length; i++) {
            if (cps[i] == '\n') {
                line++;
                col = 1;
            } else col++;
        }
        return line + ":" + col;
    }

    private GossException error(String message) {
        return errorAt(pos, message);
    }

    private GossException errorAt(int at, String message) {
        return new GossException("grammar " + where(at) + ": " + message);
    }

    static String show(int cp) {
        return cp >= 0x21 && cp < 0x7f ? "'" + Character.toString(cp) + "'" : String.format("U+%04X", cp);
    }
}
