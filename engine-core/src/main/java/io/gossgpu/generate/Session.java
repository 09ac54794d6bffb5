package io.gossgpu.generate;

import io.gossgpu.GossException;
import io.gossgpu.Timings;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.forward.Executor;
import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

/**
 * One conversation's state on a backend: a KV cache sized to the context the caller asks for, and the
 * position reached. Prefill sends the prompt as one request; each decode step sends one token. Requests go through a
 * {@link StepScheduler}: the engine's, shared by its sessions so that their steps run as one batch, or one of this
 * session's own. The cache's cost is known before allocation ({@link #cacheSpec}) and an oversize request fails with a
 * {@link GossException} naming it. Not thread-safe (one thread per session; sessions on several threads share a scheduler),
 * except {@link #cancel} and {@link #close}, which any thread may call while the session's thread generates.
 */
public final class Session implements AutoCloseable {
    /** The tokens a session's own scheduler lets a prompt take per step beside others (it has no others). */
    private static final int OWN_PREFILL_CHUNK = Integer.MAX_VALUE;

    private final StepScheduler scheduler;
    /** Whether the scheduler and its executor are this session's own (closed with it). */
    private final boolean ownScheduler;

    private final KvCache cache;
    private final double loadMs;
    private int position;
    /** One past the highest position stored in the cache since it last started from 0 (see {@link KvCacheSpec#canResume}). */
    private int written;

    private int maxBatch = Integer.MAX_VALUE;
    /** Ids from here up have no text in the tokenizer and are never sampled (see {@link #decodableVocabulary}). */
    private int decodable = Integer.MAX_VALUE;

    private volatile boolean cancelRequested;
    /** Held while a request of this session is in the scheduler, so that {@link #close} waits for the step in flight. */
    private final ReentrantLock submitting = new ReentrantLock();

    private boolean closed;

    /**
     * @param swaRollback extra ring slots on sliding-window layers so that {@link #rollbackTo} can go that much
     *                    further back ({@link KvCacheSpec#swaRollback()}); 0 keeps exactly the window
     * @param loadMs      how long loading the weights took (reported in {@link Timings}); 0 if unknown
     */
    public Session(Backend backend, LoadedWeights weights, int contextLength, int swaRollback, double loadMs) {
        this(
                new StepScheduler(new Executor(backend, weights), OWN_PREFILL_CHUNK),
                true,
                cacheSpec(weights, contextLength, swaRollback),
                loadMs);
    }

    /** A session of its own whose cache is laid out and typed as {@code spec} says. */
    public Session(Backend backend, LoadedWeights weights, KvCacheSpec spec, double loadMs) {
        this(new StepScheduler(new Executor(backend, weights), OWN_PREFILL_CHUNK), true, spec, loadMs);
    }

    /**
     * A session whose steps go through {@code scheduler}, shared with other sessions of the same executor (an engine's
     * chats): their decode steps run as one batch.
     */
    public Session(StepScheduler scheduler, int contextLength, int swaRollback, double loadMs) {
        this(scheduler, false, cacheSpec(scheduler.executor().weights(), contextLength, swaRollback), loadMs);
    }

    /** A session sharing {@code scheduler} (as above) whose cache is laid out and typed as {@code spec} says. */
    public Session(StepScheduler scheduler, KvCacheSpec spec, double loadMs) {
        this(scheduler, false, spec, loadMs);
    }

    private Session(StepScheduler scheduler, boolean own, KvCacheSpec spec, double loadMs) {
        Executor ex = scheduler.executor();
        try {
            this.cache = ex.backend().createKvCache(spec);
        } catch (RuntimeException | Error e) {
            if (own) ex.close();
            throw e;
        }
        this.scheduler = scheduler;
        this.ownScheduler = own;
        this.loadMs = loadMs;
    }

    /** A session without rollback slack. */
    public Session(Backend backend, LoadedWeights weights, int contextLength, double loadMs) {
        this(backend, weights, contextLength, 0, loadMs);
    }

    public Session(Backend backend, LoadedWeights weights, int contextLength) {
        this(backend, weights, contextLength, 0, 0);
    }

    /** The cache a session of {@code contextLength} would allocate (see {@link KvCacheSpec#bytes()}), without allocating it. */
    public static KvCacheSpec cacheSpec(LoadedWeights weights, int contextLength, int swaRollback) {
        if (contextLength <= 0) throw new GossException("context length must be positive, got " + contextLength);
        return new KvCacheSpec(weights.config(), contextLength, swaRollback);
    }

    public Executor executor() {
        return scheduler.executor();
    }

    public KvCacheSpec cacheSpec() {
        return cache.spec();
    }

    /** Tokens processed so far (the position the next token takes). */
    public int position() {
        return position;
    }

    public int contextLength() {
        return cache.spec().contextLength();
    }

    /**
     * Splits prefills into batches of at most {@code n} tokens (bounds activation memory on long prompts;
     * results are the same as one batch). Default: unlimited.
     */
    public Session maxBatch(int n) {
        if (n <= 0) throw new GossException("max batch must be positive, got " + n);
        this.maxBatch = n;
        return this;
    }

    /**
     * Samples only ids below {@code n}: a model whose vocabulary is larger than its tokenizer's (extra, untrained
     * rows) would otherwise now and then choose an id that has no text. Generation then takes the logits to the host
     * and samples there. Default: every id.
     */
    public Session decodableVocabulary(int n) {
        if (n <= 0) throw new GossException("decodable vocabulary must be positive, got " + n);
        this.decodable = n;
        return this;
    }

    /** Forgets the conversation (the cache is overwritten as positions are reused). */
    public void reset() {
        position = 0;
        written = 0;
    }

    /**
     * Whether {@link #rollbackTo}{@code (p)} would succeed: {@code 0 ≤ p ≤ position()} and the sliding-window
     * rings still hold every position that tokens from {@code p} on will read ({@link KvCacheSpec#canResume}).
     */
    public boolean canRollbackTo(int p) {
        return p >= 0 && p <= position && cache.spec().canResume(written, p);
    }

    /**
     * Keeps the first {@code p} positions and continues from there (the next token takes position {@code p}),
     * giving exactly the logits of a session that ran those {@code p} tokens from scratch. Returns false and
     * changes nothing when the cache cannot resume there ({@link #canRollbackTo}); the caller then resets and
     * runs the whole prompt again.
     */
    public boolean rollbackTo(int p) {
        if (!canRollbackTo(p)) return false;
        if (p == 0) reset();
        position = p;
        return true;
    }

    /** Runs {@code tokens} as one batch and returns the logits of the last one. */
    public float[] prefill(int[] tokens) {
        return run(tokens, Executor.Output.LAST_LOGITS).logits();
    }

    /** Runs {@code tokens} as one batch and returns the logits of all of them ({@code T × vocab}). */
    public float[] prefillAllLogits(int[] tokens) {
        return run(tokens, Executor.Output.ALL_LOGITS).logits();
    }

    /** Runs one token; returns its logits. */
    public float[] decode(int token) {
        return run(new int[] {token}, Executor.Output.LAST_LOGITS).logits();
    }

    /**
     * Runs {@code tokens} at the current position and advances it: the building block for callers that
     * drive their own loop (the public API's chats). {@code output} says what comes back to the host.
     */
    public Executor.Result forward(int[] tokens, Executor.Output output) {
        return run(tokens, output);
    }

    /**
     * Asks a running {@link #generate} to stop (safe from any thread, e.g. a Ctrl-C handler): a step it waits for is
     * dropped at once, a prompt stops after its current chunk, and a decode step under way is the last. The request is
     * cleared when the next generation starts.
     */
    public void cancel() {
        cancelRequested = true;
        scheduler.cancel(this);
    }

    private Executor.Result run(int[] tokens, Executor.Output output) {
        return run(tokens, output, null);
    }

    /** {@code sampling}: the draw when {@code output} is {@link Executor.Output#LAST_SAMPLE}, else null. */
    private Executor.Result run(int[] tokens, Executor.Output output, Executor.Sampling sampling) {
        if (tokens.length == 0) throw new GossException("no tokens to run");
        if (position + tokens.length > contextLength())
            throw new GossException((position == 0 ? "prompt of " : position + " tokens so far plus ") + tokens.length
                    + " tokens exceed the context length of " + contextLength() + " tokens");
        // Counted before running: a forward that fails half-way may already have stored some of these positions.
        written = Math.max(written, position + tokens.length);
        if (tokens.length <= maxBatch) {
            Executor.Result r = submit(tokens, output, sampling);
            position += tokens.length;
            return r;
        }
        float[] all = output == Executor.Output.ALL_LOGITS
                ? new float
                        [Math.multiplyExact(
                                tokens.length, executor().weights().config().vocabSize())]
                : null;
        Executor.Result r = null;
        for (int from = 0; from < tokens.length; from += maxBatch) {
            int[] chunk = Arrays.copyOfRange(tokens, from, Math.min(tokens.length, from + maxBatch));
            boolean last = from + chunk.length == tokens.length;
            r = submit(
                    chunk,
                    all != null ? Executor.Output.ALL_LOGITS : last ? output : Executor.Output.NONE,
                    last ? sampling : null);
            if (all != null)
                System.arraycopy(
                        r.logits(), 0, all, from * executor().weights().config().vocabSize(), r.logits().length);
            position += chunk.length;
        }
        return all != null ? new Executor.Result(all, null) : r;
    }

    /** @throws StepScheduler.Cancelled when the session is closed (a generation then ends as cancelled) */
    private Executor.Result submit(int[] tokens, Executor.Output output, Executor.Sampling sampling) {
        submitting.lock();
        try {
            if (closed) throw new StepScheduler.Cancelled("the session is closed");
            return scheduler.submit(this, new Executor.Request(tokens, cache, position, output, sampling));
        } finally {
            submitting.unlock();
        }
    }

    /**
     * Prefills {@code prompt}, then samples up to {@code options.maxTokens()} tokens, stopping after a stop
     * token or when the context is full. Greedy sampling asks the backend for the argmax only, and plain
     * temperature sampling (no top-k / top-p / min-p) for the sampled id with the sampler's own draw, so no
     * logits leave the device; with filters the logits come back and the host samples. {@code onToken} sees each new token as it is chosen.
     */
    public GenerationResult generate(int[] prompt, GenerationOptions options, IntConsumer onToken) {
        return generate(prompt, options, onToken, null);
    }

    /**
     * {@link #generate(int[], GenerationOptions, IntConsumer)}, and when {@link GenerationOptions#topLogprobs()} ≥ 0
     * each token's log probabilities go to {@code onLogprobs} just before {@code onToken} sees it. The logits then
     * come back every step and the host samples, choosing the same tokens as the device would.
     */
    public GenerationResult generate(
            int[] prompt, GenerationOptions options, IntConsumer onToken, Consumer<TokenLogprobs> onLogprobs) {
        cancelRequested = false;
        scheduler.join(this);
        try {
            return generateJoined(prompt, options, onToken, onLogprobs);
        } finally {
            scheduler.leave(this);
        }
    }

    private GenerationResult generateJoined(
            int[] prompt, GenerationOptions options, IntConsumer onToken, Consumer<TokenLogprobs> onLogprobs) {
        Sampler sampler = new Sampler(options.sampler());
        boolean logprobs = options.topLogprobs() >= 0;
        TokenConstraint constraint = options.constraint();
        LogitAdjustments adjust =
                options.adjustments() != null && !options.adjustments().isNone() ? options.adjustments() : null;
        java.util.Map<Integer, Integer> counts = LogitAdjustments.newCounts();
        boolean masked = decodable < executor().weights().config().vocabSize() || constraint != null || adjust != null;
        boolean greedy = options.sampler().isGreedy() && !logprobs && !masked;
        boolean onDevice = sampler.isPlainTemperature() && !logprobs && !masked;
        Executor.Output mode = greedy
                ? Executor.Output.LAST_ARGMAX
                : onDevice ? Executor.Output.LAST_SAMPLE : Executor.Output.LAST_LOGITS;
        double temperature = options.sampler().temperature();
        int[] out = new int[options.maxTokens()];
        int n = 0;
        long t0 = System.nanoTime();
        if (prompt.length == 0) throw new GossException("the prompt is empty");
        if (position + prompt.length > contextLength())
            throw new GossException("prompt of " + prompt.length + " tokens exceeds the context length of "
                    + contextLength() + " tokens" + (position > 0 ? " (" + position + " already used)" : ""));
        Executor.Result r;
        try {
            r = run(prompt, mode, onDevice ? new Executor.Sampling(temperature, sampler.nextUniform()) : null);
        } catch (StepScheduler.Cancelled c) {
            double ms = (System.nanoTime() - t0) / 1e6;
            return new GenerationResult(
                    new int[0],
                    GenerationResult.StopReason.CANCELLED,
                    new Timings(loadMs, prompt.length, ms, ms, 0, 0));
        }
        long tPrefill = System.nanoTime();
        long tFirst = tPrefill;
        GenerationResult.StopReason reason = GenerationResult.StopReason.MAX_TOKENS;
        while (n < options.maxTokens()) {
            int token = greedy
                    ? r.argmax()[0]
                    : onDevice ? r.sampled() : sampler.sample(hostLogits(r.logits(), constraint, adjust, counts));
            if (n == 0) tFirst = System.nanoTime();
            if (logprobs && onLogprobs != null)
                onLogprobs.accept(TokenLogprobs.of(r.logits(), token, options.topLogprobs()));
            if (constraint != null) constraint.accept(token);
            if (adjust != null) LogitAdjustments.count(counts, token);
            out[n++] = token;
            if (onToken != null) onToken.accept(token);
            if (options.stopTokens().contains(token)) {
                reason = GenerationResult.StopReason.STOP_TOKEN;
                break;
            }
            if (n == options.maxTokens()) break;
            if (cancelRequested) {
                reason = GenerationResult.StopReason.CANCELLED;
                break;
            }
            if (position >= contextLength()) {
                reason = GenerationResult.StopReason.CONTEXT_FULL;
                break;
            }
            try {
                r = run(
                        new int[] {token},
                        mode,
                        onDevice ? new Executor.Sampling(temperature, sampler.nextUniform()) : null);
            } catch (StepScheduler.Cancelled c) {
                reason = GenerationResult.StopReason.CANCELLED;
                break;
            }
        }
        long tEnd = System.nanoTime();
        Timings timings = new Timings(
                loadMs,
                prompt.length,
                (tPrefill - t0) / 1e6,
                (tFirst - t0) / 1e6,
                Math.max(0, n - 1),
                (tEnd - tFirst) / 1e6);
        return new GenerationResult(Arrays.copyOf(out, n), reason, timings);
    }

    /**
     * The logits the host samples from: only the decodable ids, adjusted by {@code adjust} (bias and penalties from
     * {@code counts}), and only those {@code constraint} allows.
     */
    private float[] hostLogits(
            float[] logits,
            TokenConstraint constraint,
            LogitAdjustments adjust,
            java.util.Map<Integer, Integer> counts) {
        float[] l = decodable < logits.length ? Arrays.copyOf(logits, decodable) : logits;
        long[] allowed = constraint != null ? constraint.allowed() : null;
        if (allowed == null && adjust == null) return l;
        if (l == logits) l = logits.clone(); // the result's logits also feed the log probabilities
        if (adjust != null) adjust.apply(l, counts);
        if (allowed != null && constraint.prefixes() != null)
            PrefixMass.transfer(l, allowed, constraint.prefixes(), constraint.endTokens(), constraint.closer());
        if (allowed != null) TokenConstraint.apply(allowed, l);
        return l;
    }

    /**
     * Ends a generation under way as {@link GenerationResult.StopReason#CANCELLED} ({@link #cancel}), waits for the step
     * it has in flight, then frees the KV cache (and the executor, when the scheduler is this session's own). From any
     * thread; once. Afterwards a generation returns cancelled at once and the other calls that run steps throw
     * {@link StepScheduler.Cancelled}.
     */
    @Override
    public void close() {
        cancel();
        submitting.lock();
        try {
            if (closed) return;
            closed = true;
            if (ownScheduler) scheduler.executor().close();
            cache.close();
        } finally {
            submitting.unlock();
        }
    }
}
