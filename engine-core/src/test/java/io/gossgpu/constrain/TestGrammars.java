package io.gossgpu.constrain;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * GBNF grammars written for the tests, each with an oracle written independently of the grammar code: a
 * java.util.regex equivalent for the regular ones, a small hand-written recognizer for the others. {@code alphabet}:
 * characters for mutating accepted texts (some the grammar uses, some it must refuse).
 */
final class TestGrammars {
    record Case(String name, String gbnf, Predicate<String> oracle, String alphabet) {
        @Override
        public String toString() {
            return name;
        }
    }

    private TestGrammars() {}

    private static Case regex(String name, String gbnf, String regex, String alphabet) {
        Pattern p = Pattern.compile(regex, Pattern.DOTALL);
        return new Case(name, gbnf, s -> p.matcher(s).matches(), alphabet);
    }

    static final List<Case> ALL = List.of(
            regex("digits", "root ::= [0-9]+", "[0-9]+", "0189a -"),
            regex("choice", "root ::= \"yes\" | \"no\" | \"maybe\"", "yes|no|maybe", "yesnomab"),
            regex(
                    "keyValue",
                    """
                    # key=value lines, up to four
                    root ::= pair ("\\n" pair){0,3}
                    pair ::= key "=" value
                    key ::= [a-z_]+
                    value ::= [0-9]+ | "\\"" [^"\\n]* "\\""
                    """,
                    "[a-z_]+=([0-9]+|\"[^\"\\n]*\")(\\n[a-z_]+=([0-9]+|\"[^\"\\n]*\")){0,3}",
                    "ab_=1\"\n x"),
            regex("date", """
                    root ::= year "-" month "-" day
                    year ::= [12] [0-9]{3}
                    month ::= "0" [1-9] | "1" [0-2]
                    day ::= "0" [1-9] | [12] [0-9] | "3" [01]
                    """, "[12][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])", "0123459-/"),
            regex("list", """
                    root ::= "[" ( item ( ", " item )* )? "]"
                    item ::= [a-z]{1,5}
                    """, "\\[([a-z]{1,5}(, [a-z]{1,5})*)?\\]", "[], abz1"),
            regex(
                    "repetitionBounds",
                    "root ::= \"a\"{2} \"b\"{1,3} \"c\"{2,} \"d\"{0,2}",
                    "a{2}b{1,3}c{2,}d{0,2}",
                    "abcde"),
            regex("identifier", "root ::= [A-Za-z_] [A-Za-z0-9_]{0,7}", "[A-Za-z_][A-Za-z0-9_]{0,7}", "aZ_09-. "),
            regex("negatedClass", "root ::= \"<\" [^<>]{1,10} \">\"", "<[^<>]{1,10}>", "<>a é\n"),
            regex(
                    "unicode",
                    "root ::= (\"ä\" | \"€\" | [\\u4e00-\\u9fff] | \"\\U0001F600\"){1,6}",
                    "(ä|€|[\\x{4e00}-\\x{9fff}]|\\x{1F600}){1,6}",
                    "ä€中文😀😁aé"),
            regex("dot", "root ::= \"'\" . . \"'\"", "'..'", "'a\né😀"),
            regex(
                    "escapes",
                    "root ::= \"\\x41\\t\\u00e9\\\\\\\"\" [\\x30-\\x39] [\\]\\-]",
                    "A\té\\\\\"[0-9][\\]\\-]",
                    "A\té\\\"05]-["),
            regex("hexColor", "root ::= \"#\" [0-9a-fA-F]{6}", "#[0-9a-fA-F]{6}", "#0aFgG9"),
            regex(
                    "email",
                    "root ::= [a-z]+ \"@\" [a-z]+ (\".\" [a-z]{2,3})+",
                    "[a-z]+@[a-z]+(\\.[a-z]{2,3})+",
                    "ab@.xy1"),
            regex(
                    "number",
                    "root ::= \"-\"? (\"0\" | [1-9] [0-9]{0,5}) (\".\" [0-9]{1,3})?",
                    "-?(0|[1-9][0-9]{0,5})(\\.[0-9]{1,3})?",
                    "-0.19+e"),
            regex("multiline", """
                    # a rule may run over several lines, with comments between
                    root ::=
                        greeting   # how it starts
                        " "
                        ( "world"
                        | "there" )
                    greeting ::= "hello" | "hi"
                    """, "(hello|hi) (world|there)", "helowrdti "),
            regex(
                    "time",
                    "root ::= ([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9]",
                    "([01][0-9]|2[0-3]):[0-5][0-9]",
                    "012359:6"),
            regex("emptyAlternative", "root ::= \"x\" opt\nopt ::= \"y\" | ", "xy?", "xyz"),
            regex("csv", "root ::= field (\",\" field){2}\nfield ::= [a-z0-9]*", "[a-z0-9]*(,[a-z0-9]*){2}", "a1,;"),
            regex("sentence", "root ::= [A-Z] [a-z ]{0,20} [.!?]", "[A-Z][a-z ]{0,20}[.!?]", "Ab .!?1"),
            new Case("arithmetic", """
                    root ::= expr
                    expr ::= term (("+" | "-") term)*
                    term ::= factor (("*" | "/") factor)*
                    factor ::= [0-9]{1,3} | "(" expr ")"
                    """, TestGrammars::arithmetic, "0129+-*/()"),
            new Case("parensDepth3", """
                    root ::= p3
                    p3 ::= ("(" p2 ")")*
                    p2 ::= ("(" p1 ")")*
                    p1 ::= ("(" ")")*
                    """, s -> balancedWithin(s, 3), "()[]"),
            new Case(
                    "brackets",
                    "root ::= b\nb ::= ( \"[\" b \"]\" | \"{\" b \"}\" )*",
                    TestGrammars::brackets,
                    "[]{}()"),
            new Case(
                    "palindrome",
                    "root ::= \"a\" root \"a\" | \"b\" root \"b\" | \"c\"",
                    TestGrammars::palindrome,
                    "abc"),
            new Case("jsonLike", """
                    root ::= value
                    value ::= object | array | string | number | "true" | "false" | "null"
                    object ::= "{" ws ( member ( "," ws member )* )? "}"
                    member ::= string ws ":" ws value ws
                    array ::= "[" ws ( value ws ( "," ws value ws )* )? "]"
                    string ::= "\\"" [a-z ]{0,8} "\\""
                    number ::= "-"? [0-9]{1,4}
                    ws ::= " "?
                    """, s -> new JsonLike(s).document(), "{}[]\":, ab-19tn"));

    // ---- recognizers for the grammars that are not regular (written here, independently of GbnfMachine)

    private static boolean arithmetic(String s) {
        int[] at = {0};
        return expr(s, at) && at[0] == s.length();
    }

    private static boolean expr(String s, int[] at) {
        if (!term(s, at)) return false;
        while (at[0] < s.length() && (s.charAt(at[0]) == '+' || s.charAt(at[0]) == '-')) {
            at[0]++;
            if (!term(s, at)) return false;
        }
        return true;
    }

    private static boolean term(String s, int[] at) {
        if (!factor(s, at)) return false;
        while (at[0] < s.length() && (s.charAt(at[0]) == '*' || s.charAt(at[0]) == '/')) {
            at[0]++;
            if (!factor(s, at)) return false;
        }
        return true;
    }

    private static boolean factor(String s, int[] at) {
        if (at[0] < s.length() && s.charAt(at[0]) == '(') {
            at[0]++;
            if (!expr(s, at) || at[0] >= s.length() || s.charAt(at[0]) != ')') return false;
            at[0]++;
            return true;
        }
        int start = at[0];
        while (at[0] < s.length() && Character.isDigit(s.charAt(at[0])) && at[0] - start < 3) at[0]++;
        return at[0] > start && (at[0] >= s.length() || !Character.isDigit(s.charAt(at[0])));
    }

    private static boolean balancedWithin(String s, int maxDepth) {
        int depth = 0;
        for (char c : s.toCharArray()) {
            if (c == '(') depth++;
            else if (c == ')') depth--;
            else return false;
            if (depth < 0 || depth > maxDepth) return false;
        }
        return depth == 0;
    }

    private static boolean brackets(String s) {
        Deque<Character> open = new ArrayDeque<>();
        for (char c : s.toCharArray()) {
            switch (c) {
                case '[', '{' -> open.push(c);
                case ']' -> {
                    if (open.isEmpty() || open.pop() != '[') return false;
                }
                case '}' -> {
                    if (open.isEmpty() || open.pop() != '{') return false;
                }
                default -> {
                    return false;
                }
            }
        }
        return open.isEmpty();
    }

    private static boolean palindrome(String s) {
        int n = s.length();
        if (n % 2 == 0 || s.charAt(n / 2) != 'c') return false;
        for (int i = 0; i < n / 2; i++) {
            char c = s.charAt(i);
            if (c != 'a' && c != 'b' || s.charAt(n - 1 - i) != c) return false;
        }
        return true;
    }

    /** The jsonLike grammar's language, by recursive descent. */
    private static final class JsonLike {
        private final String s;
        private int at;

        JsonLike(String s) {
            this.s = s;
        }

        boolean document() {
            return value() && at == s.length();
        }

        private boolean eat(char c) {
            if (at < s.length() && s.charAt(at) == c) {
                at++;
                return true;
            }
            return false;
        }

        private boolean value() {
            if (at >= s.length()) return false;
            char c = s.charAt(at);
            if (c == '{') return object();
            if (c == '[') return array();
            if (c == '"') return string();
            for (String lit : new String[] {"true", "false", "null"})
                if (s.startsWith(lit, at)) {
                    at += lit.length();
                    return true;
                }
            eat('-');
            int start = at;
            while (at < s.length() && Character.isDigit(s.charAt(at)) && at - start < 4) at++;
            return at > start && (at >= s.length() || !Character.isDigit(s.charAt(at)));
        }

        private boolean object() {
            eat('{');
            eat(' ');
            if (eat('}')) return true;
            do {
                if (!string()) return false;
                eat(' ');
                if (!eat(':')) return false;
                eat(' ');
                if (!value()) return false;
                eat(' ');
            } while (eat(',') && (eat(' ') || true));
            return eat('}');
        }

        private boolean array() {
            eat('[');
            eat(' ');
            if (eat(']')) return true;
            do {
                if (!value()) return false;
                eat(' ');
            } while (eat(',') && (eat(' ') || true));
            return eat(']');
        }

        private boolean string() {
            if (!eat('"')) return false;
            int start = at;
            while (at < s.length() && (s.charAt(at) >= 'a' && s.charAt(at) <= 'z' || s.charAt(at) == ' ')) at++;
            return at - start <= 8 && eat('"');
        }
    }
}
