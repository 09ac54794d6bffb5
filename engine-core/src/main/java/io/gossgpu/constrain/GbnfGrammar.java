package io.gossgpu.constrain;

import io.gossgpu.GossException;
import io.gossgpu.constrain.GbnfParser.Alt;
import io.gossgpu.constrain.GbnfParser.Chars;
import io.gossgpu.constrain.GbnfParser.Expr;
import io.gossgpu.constrain.GbnfParser.Ref;
import io.gossgpu.constrain.GbnfParser.Repeat;
import io.gossgpu.constrain.GbnfParser.Rule;
import io.gossgpu.constrain.GbnfParser.Seq;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiPredicate;

/**
 * A GBNF grammar compiled for {@link GbnfMachine}: every rule is a list of alternatives, each a sequence of symbols
 * (a character set or a rule), laid out one after another in {@link #code} with {@link #END} after each alternative.
 * Groups and repetitions become rules of their own ({@code x*} is {@code r ::= x r | }; {@code x{2,4}} is
 * {@code x x r2} with {@code r2 ::= x r1 | }, {@code r1 ::= x | }). Compiling checks what would break decoding:
 * undefined rules, left recursion (direct, indirect or behind symbols that can match nothing), and rules that can
 * never finish; alternatives that can never finish are dropped (they match no text), so every live matcher state
 * can be completed.
 */
public final class GbnfGrammar {
    static final int END = Integer.MIN_VALUE;

    /** Symbols: {@code >= 0} a set in {@link #sets}; {@code END}; otherwise rule {@code -(s + 1)}. */
    final int[] code;
    /** Per rule, where each of its alternatives starts in {@link #code}. */
    final int[][] alternatives;

    final int[][] sets;
    final int root;
    private final String text;

    private GbnfGrammar(int[] code, int[][] alternatives, int[][] sets, int root, String text) {
        this.code = code;
        this.alternatives = alternatives;
        this.sets = sets;
        this.root = root;
        this.text = text;
    }

    /** The grammar of GBNF {@code text}, starting at rule {@code root}; a bad grammar fails with a one-line {@link GossException}. */
    public static GbnfGrammar compile(String text) {
        Map<String, Rule> rules = GbnfParser.parse(text);
        if (!rules.containsKey("root"))
            throw new GossException("grammar: no rule named 'root' (where the output starts)");
        GbnfGrammar g = new Builder(rules).build(text);
        g.machine(); // opens the start rules: a grammar too ambiguous to start fails here, not in a reply
        return g;
    }

    /** The grammar's text as given. */
    public String text() {
        return text;
    }

    /** A fresh matcher for this grammar. */
    public GbnfMachine machine() {
        return new GbnfMachine(this);
    }

    static int ruleSymbol(int rule) {
        return -(rule + 1);
    }

    private static final class Builder {
        private final Map<String, Rule> source;
        private final Map<String, Integer> index = new HashMap<>();
        private final List<String> names = new ArrayList<>();
        private final List<List<List<Integer>>> bodies = new ArrayList<>();
        private final List<int[]> sets = new ArrayList<>();
        private final Map<String, Integer> setIndex = new HashMap<>();

        Builder(Map<String, Rule> source) {
            this.source = source;
            for (String name : source.keySet()) newRule(name);
        }

        private int newRule(String name) {
            int r = names.size();
            names.add(name);
            bodies.add(new ArrayList<>());
            index.put(name, r);
            return r;
        }

        GbnfGrammar build(String text) {
            for (Rule rule : source.values())
                bodies.get(index.get(rule.name())).addAll(alternativesOf(rule.body(), rule.name()));
            int n = names.size();
            boolean[] productive = productive(n);
            int root = index.get("root");
            // drop the alternatives that can never finish; a rule left with none is an error where it is used
            for (int r = 0; r < n; r++) bodies.get(r).removeIf(alt -> !finishes(alt, productive));
            for (int r : reachable(root)) {
                if (bodies.get(r).isEmpty())
                    throw new GossException(
                            "grammar: rule '" + userName(r)
                                    + "' can never finish (each alternative recurses without end or uses an empty character class)");
            }
            checkLeftRecursion(n);
            List<Integer> code = new ArrayList<>();
            int[][] starts = new int[n][];
            for (int r = 0; r < n; r++) {
                List<List<Integer>> alts = bodies.get(r);
                starts[r] = new int[alts.size()];
                for (int a = 0; a < alts.size(); a++) {
                    starts[r][a] = code.size();
                    code.addAll(alts.get(a));
                    code.add(END);
                }
            }
            return new GbnfGrammar(
                    code.stream().mapToInt(Integer::intValue).toArray(),
                    starts,
                    sets.toArray(int[][]::new),
                    root,
                    text);
        }

        /** The user's rule a generated one (named {@code user/n}) came from. */
        private String userName(int r) {
            String name = names.get(r);
            int cut = name.indexOf('/');
            return cut < 0 ? name : name.substring(0, cut);
        }

        private List<List<Integer>> alternativesOf(Expr e, String owner) {
            List<List<Integer>> out = new ArrayList<>();
            if (e instanceof Alt a) for (Expr o : a.options()) out.add(sequenceOf(o, owner));
            else out.add(sequenceOf(e, owner));
            return out;
        }

        private List<Integer> sequenceOf(Expr e, String owner) {
            List<Integer> seq = new ArrayList<>();
            if (e instanceof Seq s) for (Expr item : s.items()) seq.addAll(sequenceOf(item, owner));
            else seq.add(symbol(e, owner));
            return seq;
        }

        /** One symbol for {@code e}: a set, a rule, or a new rule for a group or repetition. */
        private int symbol(Expr e, String owner) {
            switch (e) {
                case Chars c -> {
                    String key = java.util.Arrays.toString(c.ranges());
                    return setIndex.computeIfAbsent(key, k -> {
                        sets.add(c.ranges());
                        return sets.size() - 1;
                    });
                }
                case Ref ref -> {
                    Integer r = index.get(ref.name());
                    if (r == null || !source.containsKey(ref.name()))
                        throw new GossException(
                                "grammar " + ref.where() + ": rule '" + ref.name() + "' is not defined");
                    return ruleSymbol(r);
                }
                case Seq s -> {
                    int r = generated(owner);
                    bodies.get(r).add(sequenceOf(s, owner));
                    return ruleSymbol(r);
                }
                case Alt a -> {
                    int r = generated(owner);
                    bodies.get(r).addAll(alternativesOf(a, owner));
                    return ruleSymbol(r);
                }
                case Repeat rep -> {
                    int unit = symbol(rep.body(), owner);
                    List<Integer> body = new ArrayList<>();
                    for (int i = 0; i < rep.min(); i++) body.add(unit);
                    if (rep.max() < 0) { // x* as r ::= x r |
                        int r = generated(owner);
                        bodies.get(r).add(List.of(unit, ruleSymbol(r)));
                        bodies.get(r).add(List.of());
                        body.add(ruleSymbol(r));
                    } else {
                        int tail = -1; // r_k ::= x r_{k-1} | (r_1 ::= x |)
                        for (int k = 1; k <= rep.max() - rep.min(); k++) {
                            int r = generated(owner);
                            bodies.get(r).add(tail < 0 ? List.of(unit) : List.of(unit, ruleSymbol(tail)));
                            bodies.get(r).add(List.of());
                            tail = r;
                        }
                        if (tail >= 0) body.add(ruleSymbol(tail));
                    }
                    if (body.size() == 1) return body.getFirst();
                    int r = generated(owner);
                    bodies.get(r).add(body);
                    return ruleSymbol(r);
                }
            }
        }

        private int generated(String owner) {
            return newRule(owner + "/" + names.size());
        }

        private boolean finishes(List<Integer> alt, boolean[] productive) {
            for (int s : alt) {
                if (s >= 0 ? sets.get(s).length == 0 : !productive[-s - 1]) return false;
            }
            return true;
        }

        private boolean[] productive(int n) {
            return rulesWithAnAlternative(n, this::finishes);
        }

        /**
         * The rules with an alternative for which {@code holds(alt, found)} is true, where {@code found} marks the
         * rules found so far: grown until no rule is added.
         */
        private boolean[] rulesWithAnAlternative(int n, BiPredicate<List<Integer>, boolean[]> holds) {
            boolean[] found = new boolean[n];
            for (boolean changed = true; changed; ) {
                changed = false;
                for (int r = 0; r < n; r++) {
                    if (found[r]) continue;
                    for (List<Integer> alt : bodies.get(r)) {
                        if (holds.test(alt, found)) {
                            found[r] = changed = true;
                            break;
                        }
                    }
                }
            }
            return found;
        }

        private List<Integer> reachable(int root) {
            boolean[] seen = new boolean[names.size()];
            List<Integer> order = new ArrayList<>(List.of(root));
            seen[root] = true;
            for (int i = 0; i < order.size(); i++)
                for (List<Integer> alt : bodies.get(order.get(i)))
                    for (int s : alt)
                        if (s < 0 && !seen[-s - 1]) {
                            seen[-s - 1] = true;
                            order.add(-s - 1);
                        }
            return order;
        }

        /** A rule that can reach itself without reading a character would send the matcher round forever. */
        private void checkLeftRecursion(int n) {
            boolean[] nullable = rulesWithAnAlternative(n, (alt, found) -> {
                boolean all = true;
                for (int s : alt) all &= s < 0 && found[-s - 1];
                return all;
            });
            List<List<Integer>> first = new ArrayList<>(); // rules each rule can start with, before any character
            for (int r = 0; r < n; r++) {
                List<Integer> f = new ArrayList<>();
                for (List<Integer> alt : bodies.get(r))
                    for (int s : alt) {
                        if (s >= 0) break;
                        f.add(-s - 1);
                        if (!nullable[-s - 1]) break;
                    }
                first.add(f);
            }
            int[] mark = new int[n]; // 0 new, 1 on the path, 2 done
            for (int r = 0; r < n; r++) if (mark[r] == 0) visit(r, first, mark, nullable);
        }

        private void visit(int r, List<List<Integer>> first, int[] mark, boolean[] nullable) {
            mark[r] = 1;
            for (int next : first.get(r)) {
                if (mark[next] == 1) {
                    String name = userName(next);
                    throw new GossException("grammar: rule '" + name
                            + "' is left-recursive (it can reach itself before reading a character"
                            + (names.get(next).contains("/")
                                    ? ", e.g. a repetition of something that can match nothing"
                                    : "")
                            + "); rewrite it with repetition, e.g. list ::= item (\",\" item)*");
                }
                if (mark[next] == 0) visit(next, first, mark, nullable);
            }
            mark[r] = 2;
        }
    }
}
