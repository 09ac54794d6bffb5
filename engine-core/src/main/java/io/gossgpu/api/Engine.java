package io.gossgpu.api;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Backends;
import io.gossgpu.backend.DeviceMemoryException;
import io.gossgpu.backend.KnobState;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.KvType;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.SettingNames;
import io.gossgpu.forward.Executor;
import io.gossgpu.generate.StepScheduler;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.tokenizer.O200kHarmony;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A loaded model on one backend: the entry point of the library.
 *
 * <pre>{@code
 * try (Engine engine = Engine.open(EngineOptions.of(Path.of("gpt-oss-20b/original")).withBackend("auto"));
 *      Chat chat = engine.newChat(ChatOptions.defaults())) {
 *     Reply r = chat.send("Why is the sky blue?", new ChatListener() {
 *         public void onContent(String delta) { System.out.print(delta); }
 *     });
 * }
 * }</pre>
 *
 * Several chats may run at once on one engine, from different threads: each has its own KV cache, and their forward
 * passes are batched (continuous batching, {@link StepScheduler}): one step runs the next token of every chat that is
 * decoding, plus a chunk of at most {@link EngineOptions#prefillChunk()} tokens of one waiting prompt, reading the
 * weights once for all of them. A chat's tokens are the same whether it ran alone or beside others. The backend
 * (which one thread must drive at a time) is shared under a lock, held op by op and for the whole of a step
 * ({@link Backend#beginStep} to {@link Backend#endStep}). Closing the engine, from any thread, ends the replies under
 * way (as {@link StopReason#CANCELLED}), waits for the step in flight, closes its
 * chats and completions, and then releases all native memory (weights, caches, mapped files); a closed engine, and
 * its chats, refuse further work with a {@link GossException}.
 */
public final class Engine implements AutoCloseable {
    private final Checkpoint checkpoint;
    private final Backend backend;
    private final LoadedWeights weights;
    private final double loadMs;
    private final BackendOptions backendOptions;
    private final KvType kvType;
    private final Executor executor;
    private final StepScheduler scheduler;
    private final Set<AutoCloseable> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private Engine(
            Checkpoint checkpoint,
            Backend backend,
            LoadedWeights weights,
            double loadMs,
            BackendOptions backendOptions,
            int prefillChunk,
            KvType kvType) {
        this.checkpoint = checkpoint;
        this.kvType = kvType;
        this.backend = backend;
        this.weights = weights;
        this.loadMs = loadMs;
        this.backendOptions = backendOptions;
        this.executor = new Executor(backend, weights);
        this.scheduler = new StepScheduler(executor, prefillChunk);
    }

    /**
     * Opens the model, validates it, chooses the backend and uploads the weights. On a GPU backend the MoE experts are
     * placed as {@link EngineOptions#placement()} says (by default all on the GPU when they fit, else the first layers'
     * on the cpu backend: {@link io.gossgpu.backend.Backend#placeExperts}). With {@code auto} a GPU whose free memory
     * cannot hold even the model without its experts ({@link DeviceMemoryException}) is closed again and the next
     * available backend (by {@link Backends#auto()}'s order) takes the model; a message on {@link EngineLog} says so.
     */
    public static Engine open(EngineOptions options) {
        JvmFlags.warnOnceIfMissing();
        SettingNames.warnOnce(
                SettingNames.unknown(options.backendOptions().asMap().keySet(), SettingNames.known()));
        if (!Backends.isAuto(options.backend()))
            return open(options, () -> Backends.open(options.backend(), options.backendOptions()));
        return openFirst(
                options,
                () -> Backends.auto().stream()
                        .map(p -> new Candidate(p.name(), () -> p.create(options.backendOptions())))
                        .toList());
    }

    /**
     * {@link #open(EngineOptions)} on a backend the caller makes: one of its own (an implementation of the
     * {@link Backend} SPI), or a named one wrapped, e.g. to trace or script its calls. {@code backendFactory} runs once,
     * after the model is validated; the engine owns and closes what it returns. {@code options.backend()} and its
     * backend options are not used.
     */
    public static Engine open(EngineOptions options, java.util.function.Supplier<Backend> backendFactory) {
        return openFirst(options, () -> List.of(new Candidate("", backendFactory)));
    }

    /** A backend the engine may load the model on: its name (for messages) and how to create it. */
    record Candidate(String name, java.util.function.Supplier<Backend> create) {}

    /**
     * Loads the model on the first of {@code candidates} (listed once the model is validated) whose device holds the
     * weights: one that throws {@link DeviceMemoryException} is closed, with a message on {@link EngineLog}, and the next is
     * tried; the last one's error is the caller's.
     */
    static Engine openFirst(EngineOptions options, java.util.function.Supplier<List<Candidate>> candidates) {
        long t0 = System.nanoTime();
        Checkpoint ckpt = Checkpoint.open(options.model(), options.loadOptions());
        Backend backend = null;
        try {
            ModelWeights mw = ModelWeights.of(ckpt);
            checkContextLength(options.contextLength(), mw.config());
            String note = ckpt.conversions().quantizationNote();
            if (note != null) EngineLog.LOG.log(System.Logger.Level.INFO, note);
            List<Candidate> tries = candidates.get();
            LoadedWeights lw = null;
            for (int i = 0; lw == null; i++) {
                backend = tries.get(i).create().get();
                if (i == 0) {
                    VocabularySizeCheck.warnIfLarger(mw.config(), options.model());
                    VocabularySizeCheck.warnIfDifferent(ckpt.metadata());
                }
                try {
                    backend = backend.placeExperts(
                            mw,
                            options.placement().withKvType(options.kvType()),
                            options.prefillChunk(),
                            () -> Backends.open("cpu", options.backendOptions()));
                    lw = backend.loadWeights(mw);
                } catch (DeviceMemoryException e) {
                    if (i + 1 == tries.size()) throw e;
                    EngineLog.LOG.log(
                            System.Logger.Level.INFO,
                            backend.name() + ": " + e.getMessage() + "; auto loads the model on "
                                    + tries.get(i + 1).name() + " instead");
                    backend.close();
                    backend = null;
                }
            }
            return new Engine(
                    ckpt,
                    serialized(backend, ckpt.path(), ckpt.mappedFiles()::checkUnchanged),
                    lw,
                    (System.nanoTime() - t0) / 1e6,
                    options.backendOptions(),
                    options.prefillChunk(),
                    options.kvType());
        } catch (RuntimeException | Error e) {
            if (backend != null) backend.close();
            ckpt.close();
            if (e instanceof InternalError ie) throw mappedFileFault(ckpt.path(), ie);
            throw e;
        }
    }

    /**
     * The one check of a requested context against the model's positions (they end at initial_context_length ×
     * rope_scaling_factor): made when the config is read, before any weights are uploaded or KV cache sized, and
     * again for each chat's, completion's and KV cache's own context (an engine opened without stating one).
     */
    static void checkContextLength(int contextLength, ModelConfig c) {
        if (contextLength > c.maxContextLength())
            throw new GossException("context length " + contextLength + " exceeds this model's maximum of "
                    + c.maxContextLength() + " tokens (initial_context_length " + c.initialContextLength()
                    + " × rope_scaling_factor " + c.ropeScalingFactor() + ")");
    }

    /**
     * A read of mapped memory whose file was truncated or rewritten faults (SIGBUS); where the JVM turns that fault
     * into an {@link InternalError} (plain Java reads, bulk copies: the reference backend, and every backend while it
     * uploads), it becomes this one-line error. Vectorized or native code reading the mapping (the cpu backend while
     * it runs) cannot be caught so: the process dies, which {@code --no-mmap} avoids.
     */
    static RuntimeException mappedFileFault(java.nio.file.Path model, InternalError e) {
        if (!String.valueOf(e.getMessage()).contains("unsafe memory access")) throw e;
        return new GossException(
                model + ": the model file was truncated or changed while mapped (" + e.getMessage()
                        + "); leave it alone while it is in use, or read it into memory (--no-mmap, EngineOptions.withMmap(false))",
                e);
    }

    /** What was loaded: the model's path, format and shape. */
    public ModelInfo modelInfo() {
        return ModelInfo.of(checkpoint, config());
    }

    ModelConfig config() {
        return weights.config();
    }

    /**
     * The KV cache a chat of {@code contextLength} tokens holds on this model (its memory, per layer kind), with
     * {@code swaRollback} extra slots on the sliding-window layers ({@link ChatOptions#swaRollback()}); a raw
     * completion's has none. Servers size their pools with it; {@link KvCacheSpec#describe()} words it. A context
     * beyond the model's maximum is refused as {@link #open} refuses it.
     */
    public KvCacheSpec kvCacheSpec(int contextLength, int swaRollback) {
        checkContextLength(contextLength, config());
        return new KvCacheSpec(config(), contextLength, swaRollback, kvType);
    }

    /** How this engine's KV caches store keys and values ({@link EngineOptions#kvType()}). */
    public KvType kvType() {
        return kvType;
    }

    /** The backend's name and device, e.g. {@code "cpu (2 threads, AVX-512)"}. */
    public String backendDescription() {
        return backend.name() + " (" + backend.deviceDescription() + ")";
    }

    /**
     * The knobs of this engine's backend as it runs them on its device: each value in effect and where it came from
     * (default, device default, environment, code), for listings ({@code goss-gpu --verbose}). Empty for a backend
     * without knobs.
     */
    public List<KnobState> knobs() {
        String name = backend.name();
        return Backends.providers().stream()
                .filter(p -> p.name().equals(name))
                .findFirst()
                .map(p -> p.knobStates(backendOptions))
                .orElse(List.of());
    }

    /** The checkpoint the weights came from (internal: tests look at its mapped files). */
    Checkpoint checkpoint() {
        return checkpoint;
    }

    /** Milliseconds from {@link #open} to weights on the device. */
    public double loadMs() {
        return loadMs;
    }

    /** A new Harmony chat with its own KV cache. */
    public Chat newChat(ChatOptions options) {
        requireHarmonyVocabulary();
        checkContextLength(options.contextLength(), config());
        return track(() -> new Chat(this, options));
    }

    /** A new raw text completion session (no Harmony formatting) with its own KV cache. */
    public Completion newCompletion(ChatOptions options) {
        checkContextLength(options.contextLength(), config());
        return track(() -> new Completion(this, options));
    }

    /** Chats and completions opened on this engine and not yet closed (servers check for leaked sessions with it). */
    public int openSessions() {
        return open.size();
    }

    Backend backend() {
        return backend;
    }

    LoadedWeights weights() {
        return weights;
    }

    /** Where this engine's chats and completions hand their steps (one batch for all of them). */
    StepScheduler scheduler() {
        return scheduler;
    }

    /** Steps run so far and the rows and sequences they held (rows per step above 1: chats were batched). */
    public StepStats stepStats() {
        StepScheduler.Stats s = scheduler.stats();
        return new StepStats(s.steps(), s.rows(), s.sequences());
    }

    /**
     * How the backend's work ran so far ({@link Backend#counters()}): CUDA graphs captured and replayed, Metal command
     * buffers committed, …; empty for a backend that counts nothing. Any thread may read them while steps run.
     */
    public java.util.SortedMap<String, Long> backendCounters() {
        return backend.counters();
    }

    void forget(AutoCloseable session) {
        open.remove(session);
    }

    /** A new session, made (its KV cache allocated) only while the engine is open; {@link #close} closes it. */
    private <T extends AutoCloseable> T track(java.util.function.Supplier<T> make) {
        synchronized (open) {
            if (closed) throw new GossException("the engine is closed");
            T session = make.get();
            open.add(session);
            return session;
        }
    }

    private void requireHarmonyVocabulary() {
        int needed = O200kHarmony.CALL + 1;
        if (config().vocabSize() < needed)
            throw new GossException("this model's vocabulary has " + config().vocabSize() + " tokens, fewer than the "
                    + needed + " Harmony chat needs; use raw completion or a model with the o200k_harmony vocabulary");
    }

    /**
     * Ends every reply under way as cancelled, waits for the step in flight, then frees the sessions' caches, the
     * weights and the backend. Returns once all of it is done (also to a second caller while the first is closing).
     */
    @Override
    public synchronized void close() {
        if (closed) return;
        AutoCloseable[] sessions;
        synchronized (open) {
            closed = true;
            sessions = open.toArray(new AutoCloseable[0]);
        }
        for (AutoCloseable s : sessions) {
            try {
                s.close(); // cancels its reply and waits for that reply's step in flight
            } catch (Exception e) {
                // keep closing the rest
            }
        }
        executor.close();
        weights.close();
        backend.close();
        checkpoint.close();
    }

    /**
     * The backend with every call made under one lock, so sessions on several threads can share it. A successful
     * {@code beginStep} keeps the lock until the same thread's {@code endStep}: a step belongs to one session. Every
     * backend's steps pass here, so {@code beforeStep} runs before each ({@link io.gossgpu.model.MappedFiles#checkUnchanged}:
     * a model file changed under its mapping stops generation with one line, where the cpu backend's kernels would die
     * of SIGBUS reading it). A fault reading the mapped model ({@code model}) becomes a one-line error.
     */
    static Backend serialized(Backend b, java.nio.file.Path model, Runnable beforeStep) {
        ReentrantLock lock = new ReentrantLock();
        return (Backend) Proxy.newProxyInstance(
                Backend.class.getClassLoader(), new Class<?>[] {Backend.class}, (proxy, method, args) -> {
                    String name = method.getName();
                    lock.lock();
                    boolean holdForStep = false;
                    try {
                        if (name.equals("beginStep")) beforeStep.run();
                        Object r = method.invoke(b, args);
                        holdForStep = name.equals("beginStep");
                        return r;
                    } catch (InvocationTargetException e) {
                        throw e.getCause() instanceof InternalError ie ? mappedFileFault(model, ie) : e.getCause();
                    } finally {
                        if (name.equals("endStep") && lock.getHoldCount() > 1) lock.unlock(); // the hold beginStep took
                        if (!holdForStep) lock.unlock();
                    }
                });
    }
}
