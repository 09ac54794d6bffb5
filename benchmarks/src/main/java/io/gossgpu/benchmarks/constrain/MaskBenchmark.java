package io.gossgpu.benchmarks.constrain;

import io.gossgpu.constrain.ByteMatcher;
import io.gossgpu.constrain.GbnfGrammar;
import io.gossgpu.constrain.SchemaCompiler;
import io.gossgpu.constrain.TokenMasker;
import io.gossgpu.tokenizer.O200kHarmony;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of one structured-output token mask over the 201088-token vocabulary (issue 40's target: at most 100 µs at
 * p99). Setup writes documents of each schema token by token, choosing random allowed tokens, and keeps the
 * constraint's state before every token; each benchmark call computes the mask of the next kept state (all of them
 * in turn), so the sample-time percentiles are over the states a reply really passes through. JSON masks are computed
 * from scratch; GBNF grammars ({@code gbnf*}) use their machine's state, transition and per-state mask caches, filled during
 * setup as it is by a format's first replies ({@link #cache} times first masks instead; {@code cache=reply} times
 * what a first request sees). {@link #compile} times compiling a schema or grammar to its matcher, with whatever the
 * matcher precomputes. Run: {@code java -jar benchmarks/target/benchmarks.jar MaskBenchmark}.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xmx2g"})
@State(Scope.Benchmark)
public class MaskBenchmark {
    /**
     * The schemas: a flat record, nested arrays of objects, anyOf of objects, json_object (any object), and strings
     * with patterns (their masks precomputed when the schema becomes a matcher, see {@link #compile}); GBNF
     * grammars: arithmetic with parentheses, key=value lines with quoted values, a small JSON-like language.
     */
    @Param({"person", "nested", "anyOf", "jsonObject", "pattern", "gbnfArithmetic", "gbnfKeyValue", "gbnfJsonLike"})
    public String schema;

    /**
     * warm: the per-state caches filled in setup (a reply's later steps); newCount: the masker's lazily filled
     * pattern caches dropped before each mask, keeping what was walked per frame; cold: both dropped. Masks that a
     * schema's matcher precomputes for its patterns (every frame between characters, at every count) live with the
     * compiled schema and are not dropped: newCount and cold only reach frames inside a character. reply: the
     * documents setup wrote are replayed token by token, each from a freshly compiled schema or grammar (no cache
     * from earlier replies), timing the mask before every token: the per-token cost of a format's first request.
     */
    @Param({"warm", "reply"})
    public String cache;

    private final TokenMasker masker = TokenMasker.get();
    private ByteMatcher matcher;
    private List<Object> states;
    /** The documents setup wrote, as tokens (for cache=reply). */
    private List<int[]> replies;

    private long[] mask;
    private int next;
    /** cache=reply: the reply being replayed, the index of its next token, and the state before that token. */
    private int[] script;

    private int pos, replyIndex;
    private ByteMatcher replyMatcher;
    private Object replyState;

    private static ByteMatcher matcher(String name) {
        return switch (name) {
            case "gbnfArithmetic" -> GbnfGrammar.compile("""
                    root ::= expr
                    expr ::= term (("+" | "-") term)*
                    term ::= factor (("*" | "/") factor)*
                    factor ::= [0-9]{1,6} | "(" expr ")"
                    """).machine();
            case "gbnfKeyValue" -> GbnfGrammar.compile("""
                    root ::= pair ("\\n" pair){0,7}
                    pair ::= [a-z_]{1,16} "=" ([0-9]{1,8} | "\\"" [^"\\n]{0,40} "\\"")
                    """).machine();
            case "gbnfJsonLike" -> GbnfGrammar.compile("""
                    root ::= value
                    value ::= object | array | string | [0-9]{1,6} | "true" | "false" | "null"
                    object ::= "{" ( string ":" value ( "," string ":" value )* )? "}"
                    array ::= "[" ( value ( "," value )* )? "]"
                    string ::= "\\"" [^"\\\\]{0,16} "\\""
                    """).machine();
            default -> ByteMatcher.json(schema(name));
        };
    }

    private static io.gossgpu.constrain.JsonGrammar schema(String name) {
        return switch (name) {
            case "person" -> SchemaCompiler.compile("""
                    {"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},
                     "unit":{"enum":["celsius","fahrenheit"]}},"required":["name","age","unit"],"additionalProperties":false}""");
            case "nested" -> SchemaCompiler.compile("""
                    {"type":"object","properties":{"items":{"type":"array","items":{"type":"object",
                      "properties":{"id":{"type":"integer"},"tags":{"type":"array","items":{"type":"string","maxLength":12},"maxItems":3}},
                      "required":["id","tags"],"additionalProperties":false},"minItems":1,"maxItems":4}},
                     "required":["items"],"additionalProperties":false}""");
            case "anyOf" -> SchemaCompiler.compile("""
                    {"type":"object","properties":{"shape":{"anyOf":[
                      {"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number"}},"required":["kind","r"],"additionalProperties":false},
                      {"type":"object","properties":{"kind":{"const":"rect"},"w":{"type":"number"},"h":{"type":"number"}},"required":["kind","w","h"],"additionalProperties":false}]}},
                     "required":["shape"],"additionalProperties":false}""");
            case "jsonObject" -> SchemaCompiler.anyObject();
            case "pattern" -> SchemaCompiler.compile("""
                    {"type":"object","properties":{"sku":{"type":"string","pattern":"^[A-Z]{3}-\\\\d{4}$"},
                     "email":{"type":"string","pattern":"^[a-z.]+@[a-z]+\\\\.(com|org)$","maxLength":40},
                     "note":{"type":"string","pattern":"ok","maxLength":60}},
                     "required":["sku","email","note"],"additionalProperties":false}""");
            default -> throw new IllegalArgumentException(name);
        };
    }

    @Setup
    public void setup() {
        O200kHarmony tok = O200kHarmony.get();
        states = new ArrayList<>();
        replies = new ArrayList<>();
        mask = new long[masker.words()];
        SplittableRandom rnd = new SplittableRandom(1);
        matcher = matcher(schema);
        for (int doc = 0; doc < 8 && states.size() < 2000; doc++) {
            Object state = matcher.start();
            List<Integer> tokens = new ArrayList<>();
            for (int n = 0; n < 120; n++) {
                long[] m = new long[masker.words()];
                matcher.allowed(masker, state, m);
                if (matcher.canEnd(state)) m[O200kHarmony.RETURN >>> 6] |= 1L << O200kHarmony.RETURN;
                states.add(state);
                int token = pick(m, rnd, n > 60);
                if (token == O200kHarmony.RETURN) break;
                tokens.add(token);
                state = matcher.step(state, tok.tokenBytes(token));
            }
            replies.add(tokens.stream().mapToInt(Integer::intValue).toArray());
        }
    }

    /** cache=reply: the state before the next token of the reply being replayed; a new reply from a fresh compile. */
    @Setup(Level.Invocation)
    public void replyState() {
        if (!cache.equals("reply")) return;
        if (script == null || pos > script.length) {
            script = replies.get(replyIndex++ % replies.size());
            pos = 0;
            replyMatcher = matcher(schema);
            replyState = replyMatcher.start();
        }
    }

    /** cache=reply: takes the token the mask was for (the last mask of a reply is the one that allows the end). */
    @TearDown(Level.Invocation)
    public void replyStep() {
        if (!cache.equals("reply")) return;
        if (pos < script.length)
            replyState = replyMatcher.step(replyState, O200kHarmony.get().tokenBytes(script[pos]));
        pos++;
    }

    /** A random allowed token; late in a document the lowest allowed id that is not whitespace-only, to close it. */
    private static int pick(long[] mask, SplittableRandom rnd, boolean close) {
        if ((mask[O200kHarmony.RETURN >>> 6] >>> (O200kHarmony.RETURN & 63) & 1) == 1 && close)
            return O200kHarmony.RETURN;
        int count = 0;
        for (long w : mask) count += Long.bitCount(w);
        int k = close ? 0 : rnd.nextInt(count);
        for (int w = 0; w < mask.length; w++) {
            int c = Long.bitCount(mask[w]);
            if (k < c) {
                long bits = mask[w];
                for (int i = 0; i < k; i++) bits &= bits - 1;
                return w * 64 + Long.numberOfTrailingZeros(bits);
            }
            k -= c;
        }
        throw new IllegalStateException("empty mask");
    }

    @Benchmark
    public long[] mask() {
        java.util.Arrays.fill(mask, 0);
        if (cache.equals("reply")) {
            replyMatcher.allowed(masker, replyState, mask);
            return mask;
        }
        Object state = states.get(next);
        next = next + 1 == states.size() ? 0 : next + 1;
        if (!cache.equals("warm")) masker.forgetPatternCaches(cache.equals("cold"));
        matcher.allowed(masker, state, mask);
        return mask;
    }

    /** Compiling the schema or grammar to the matcher a request uses (with what it precomputes for its masks). */
    @Benchmark
    public ByteMatcher compile() {
        return matcher(schema);
    }
}
