package io.gossgpu.device;

import io.gossgpu.backend.KvType;
import java.util.List;
import java.util.function.Function;

/**
 * Attention with sinks (causal, sliding window, GQA) of one sequence of a step, then its rows stored in the KV cache,
 * written once over a {@link Launcher} for every GPU API. The kernels (backend-cuda/kernels/attention.cu,
 * backend-opencl/kernels/attention.cl, backend-metal/kernels/attention.metal) take the buffers listed at their launch below, in that
 * order, then {@link AttentionParams}; each reads the sequence's first position from {@code pos[0]}.
 * <ul>
 *   <li>{@code attention}: one group per (query head, row) over all its keys (every API).</li>
 *   <li>{@code attention_gqa}: one group per (KV head, rows) for all the query heads that share it, so each key and
 *       value row is read once per group; with {@code splits > 1} the keys are cut into that many pieces, each written
 *       as a partial softmax state (CUDA, OpenCL).</li>
 *   <li>{@code attention_mma}: attention_gqa's prefill on tensor cores, without splits (CUDA, compute capability 8.0+).</li>
 *   <li>{@code attention_split}: {@code attention} with its keys cut into {@code splits} pieces (OpenCL).</li>
 *   <li>{@code attention_combine}: merges the partial states of a split call, with the sink (CUDA, OpenCL). The
 *       partials buffer's layout is each API's own, written and read by its own kernels.</li>
 *   <li>{@code kv_store}: rows {@code first ..} into the cache slots of their positions, after the attention,
 *       encoded as {@link AttentionParams#kvType} says (the layout of {@link io.gossgpu.backend.KvType}).</li>
 *   <li>{@code kv_round}: before the attention, on a cache that is not F32, the batch's rows of k and v rounded in
 *       place to what the cache will hold ({@link io.gossgpu.backend.KvType#round}), so that the batch attends to its
 *       own keys as later steps will read them. Every attention kernel reads the cache in its type.</li>
 * </ul>
 * Which kernel a call takes, its splits, and how each kernel spreads its work over groups come in as each API's
 * {@link AttentionShapes}.
 *
 * @param <B> the API's buffer argument
 */
public final class AttentionPipeline<B> {
    public static final String ATTENTION = "attention",
            GQA = "attention_gqa",
            SPLIT = "attention_split",
            COMBINE = "attention_combine",
            KV_STORE = "kv_store",
            MMA = "attention_mma",
            KV_ROUND = "kv_round";
    /** The kernels, by name. */
    public static final List<String> KERNELS = List.of(ATTENTION, GQA, SPLIT, COMBINE, KV_STORE, MMA, KV_ROUND);
    /** Buffers each kernel takes before its {@link AttentionParams}, in {@link #KERNELS}' order. */
    public static final List<Integer> BUFFERS = List.of(8, 9, 9, 3, 5, 8, 2);

    /** Buffers each kernel {@code name} takes before its params. */
    public static int buffers(String name) {
        int i = KERNELS.indexOf(name);
        if (i < 0) throw new IllegalArgumentException(name + " is not an attention kernel");
        return BUFFERS.get(i);
    }

    /**
     * One call's buffers: the batch's q, k, v and out (the kernels move to the sequence's rows by {@link AttentionParams#row0}),
     * the layer's key and value cache and its sinks.
     */
    public record Buffers<B>(B q, B k, B v, B keys, B values, B sinks, B out) {}

    private final Launcher<B> launcher;
    private final AttentionShapes shapes;
    private final DeviceKernel kAttention, kGqa, kSplit, kCombine, kKvStore, kMma, kKvRound;
    private long gqaCalls, mmaCalls;

    /** The kernels the API has looked up now, so a missing one fails when the backend is made. */
    public AttentionPipeline(Launcher<B> launcher, AttentionShapes shapes) {
        this.launcher = launcher;
        this.shapes = shapes;
        kAttention = launcher.kernel(ATTENTION);
        kGqa = shapes.gqa() == null ? null : launcher.kernel(GQA);
        kSplit = shapes.split() == null ? null : launcher.kernel(SPLIT);
        kCombine = shapes.combine() == null ? null : launcher.kernel(COMBINE);
        kKvStore = launcher.kernel(KV_STORE);
        kMma = shapes.mma() == null ? null : launcher.kernel(MMA);
        kKvRound = shapes.kvRound() == null ? null : launcher.kernel(KV_ROUND);
    }

    /** Whether this API's kernels store and read a cache of type {@code t} (all types where it has kv_round). */
    public boolean stores(KvType t) {
        return t == KvType.F32 || kKvRound != null;
    }

    /** The kernel {@code name} of this pipeline (for a backend's checks of its group sizes); a failure for one this API lacks. */
    public DeviceKernel kernel(String name) {
        DeviceKernel k = switch (name) {
            case ATTENTION -> kAttention;
            case GQA -> kGqa;
            case SPLIT -> kSplit;
            case COMBINE -> kCombine;
            case KV_STORE -> kKvStore;
            case MMA -> kMma;
            case KV_ROUND -> kKvRound;
            default -> throw new IllegalArgumentException(name + " is not an attention kernel");
        };
        if (k == null) throw new IllegalStateException("this API runs no " + name);
        return k;
    }

    /** Calls that took attention_gqa so far. */
    public long gqaCalls() {
        return gqaCalls;
    }

    /** Calls that took attention_mma so far. */
    public long mmaCalls() {
        return mmaCalls;
    }

    /** Bytes of the partial softmax states of a call with {@code p.splits()} splits: (m, l, hd sums) per split, row and head. */
    public static long partialBytes(AttentionParams p) {
        return 4L * p.splits() * p.tokens() * p.heads() * (p.headDim() + 2);
    }

    /**
     * Attention of the {@code call.tokens()} rows from {@code call.row0()} (positions {@code start ..}, which the kernels
     * read from {@code pos} at byte {@code posOffset}), then those rows stored in the cache.
     */
    public void run(
            Buffers<B> b, AttentionParams call, int start, B pos, long posOffset, MoePipeline.Scratch<B> scratch) {
        AttentionShapes.Plan plan = shapes.plan().plan(call, start);
        AttentionParams p = call.planned(plan.splits(), plan.tileQueries());
        if (p.type() != KvType.F32)
            finish(launcher.launch(kernel(KV_ROUND)).buffer(b.k()).buffer(b.v()), shapes.kvRound(), p);
        boolean split = plan.splits() > 1;
        B part = split ? scratch.ensure("attention partial sums", partialBytes(p)) : b.out(); // unread without splits
        switch (plan.kernel()) {
            case GQA -> {
                gqaCalls++;
                finish(attend(kernel(GQA), b, pos, posOffset).buffer(part), shapes.gqa(), p);
            }
            case SPLIT -> {
                if (!split) throw new IllegalStateException(SPLIT + " planned without splits");
                finish(attend(kernel(SPLIT), b, pos, posOffset).buffer(part), shapes.split(), p);
            }
            case MMA -> {
                if (split) throw new IllegalStateException(MMA + " planned with " + plan.splits() + " splits");
                mmaCalls++;
                finish(attend(kernel(MMA), b, pos, posOffset), shapes.mma(), p);
            }
            case ATTENTION -> {
                if (split) throw new IllegalStateException(ATTENTION + " planned with " + plan.splits() + " splits");
                finish(attend(kAttention, b, pos, posOffset), shapes.attention(), p);
            }
            default -> throw new IllegalStateException("no attention kernel " + plan.kernel());
        }
        if (split)
            finish(
                    launcher.launch(kernel(COMBINE))
                            .buffer(part)
                            .buffer(b.sinks())
                            .buffer(b.out()),
                    shapes.combine(),
                    p);
        finish(
                launcher.launch(kKvStore)
                        .buffer(b.k())
                        .buffer(b.v())
                        .buffer(b.keys())
                        .buffer(b.values())
                        .buffer(pos, posOffset),
                shapes.kvStore(),
                p);
    }

    /** A launch of an attention kernel with its first eight buffers: q, k, v, the cache's keys and values, sinks, out, pos. */
    private KernelLaunch<B> attend(DeviceKernel k, Buffers<B> b, B pos, long posOffset) {
        return launcher.launch(k)
                .buffer(b.q())
                .buffer(b.k())
                .buffer(b.v())
                .buffer(b.keys())
                .buffer(b.values())
                .buffer(b.sinks())
                .buffer(b.out())
                .buffer(pos, posOffset);
    }

    private static <B> void finish(
            KernelLaunch<B> launch, Function<AttentionParams, AttentionShapes.Shape> shape, AttentionParams p) {
        AttentionShapes.Shape s = shape.apply(p);
        for (long bytes : s.locals()) launch.local(bytes);
        launch.run(p, s.grid());
    }
}
