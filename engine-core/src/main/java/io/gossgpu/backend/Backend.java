package io.gossgpu.backend;

import io.gossgpu.model.ModelWeights;

/**
 * A compute device, in the spirit of ggml-backend: it owns device memory (weights, activations, KV
 * cache, router output) and executes the model's ops on it. Per decoded token only logits (or an argmax
 * token id) cross back to the host. Every op works for a batch of {@code T ≥ 1} rows: activations are
 * {@code T × width} {@link DeviceTensor}s whose row {@code i} is one token of one sequence ({@link Batch}).
 *
 * <p>The math of each op is stated in its Javadoc and is the contract; the {@code reference} backend
 * ({@link io.gossgpu.reference.ReferenceBackend}) implements it literally with float32 storage and double
 * accumulation. A backend may fuse neighbouring ops internally but must produce what the separate ops
 * would. Output tensors never alias inputs unless an op says so. Shapes are checked by the caller
 * ({@link io.gossgpu.forward.Executor}); a backend may assume them.
 *
 * <p>Ops may be queued asynchronously; {@link #read}, {@link #readRouting}, {@link #logits} and {@link #argmax}
 * return only when the work they depend on is done. Not thread-safe: one thread drives a backend. Closing
 * releases all native memory it still owns.
 *
 * <p><b>Steps.</b> A forward pass is a step: {@link #beginStep}{@code (batch)}, the ops of every layer for the batch's
 * rows, one result read ({@link #logits}, {@link #argmax} or {@link #sample}: the step's last op), then {@link #endStep}.
 * A step's {@link Batch} holds the next tokens of one or more sequences, each with its own KV cache and positions
 * (continuous batching: a prefill chunk and the decode tokens of other sequences in one pass, so the weights are read
 * once for all of them). Row-wise ops never look at the batch; {@link #qkvRope} and {@link #attention} take it. Steps
 * do not nest, and between {@code beginStep} and {@code endStep} only that step's calls reach the backend (the engine
 * holds its lock for the whole step). Knowing where a step starts and ends, a backend may defer its work: {@code cuda}
 * records the launches of a step of single-token sequences and runs them as one CUDA graph (one per batch shape) when
 * the result is read; {@code metal} encodes the step into one command buffer, committed at the result read. Any other
 * host read or write inside a step (a debugging observer reading activations) still sees every earlier op's result;
 * the backend may then submit what it deferred and run the rest of the step eagerly. Ops called outside a step (tests
 * of single ops) behave as ever.
 *
 * <p><b>Declining an op</b> (as ggml's {@code supports_op}). {@link #supports} says which {@link BackendOp}s a backend
 * runs itself; a declinable one it does not is run by {@link DeclinedOps}, the one place that knows each op's fallback:
 * a fused op as the ops it fuses, another op on the host from what the backend can return. <b>To add an op:</b>
 * add it to {@link BackendOp} with its fallback and {@code supportedByDefault = false}; add its method here with its
 * contract and a default that runs the fallback (through {@link DeclinedOps}); implement it on the reference backend
 * literally and on cpu, each also answering {@code supports(op) = true} ({@link ForwardingBackend} declines it as it is);
 * call it from the executor through {@link DeclinedOps}; test reference and cpu against the decomposition and add it to the
 * conformance kit. The GPU backends keep declining it until they have a kernel, then override {@code supports}.
 */
public interface Backend extends AutoCloseable {
    /** The provider's name ({@code reference}, {@code cpu}, …). */
    String name();

    /** One line about the device, e.g. {@code "NVIDIA H100 80GB, CUDA 12.4"}. */
    String deviceDescription();

    // ---- memory -------------------------------------------------------------------------------

    /** A zero-filled {@code rows × cols} F32 tensor on the device. */
    DeviceTensor allocate(int rows, int cols);

    /** Host → device: {@code src.length == rows·cols}, row-major. */
    void write(DeviceTensor dst, float[] src);

    /** Device → host, row-major. For tests and debugging; the decode loop uses {@link #logits}/{@link #argmax}. */
    float[] read(DeviceTensor src);

    /** Router output storage for {@code rows} tokens of {@code k} experts. */
    DeviceRouting allocateRouting(int rows, int k);

    void writeRouting(DeviceRouting dst, Routing src);

    Routing readRouting(DeviceRouting src);

    /**
     * Uploads (or maps, or repacks) every weight once. Throws {@link io.gossgpu.GossException} when the device
     * cannot hold them, naming the sizes; a GPU backend throws its {@link DeviceMemoryException} before it uploads
     * anything, so that {@code auto} can go on to the next backend (the cpu backend's own error suggests its
     * in-place kernels instead).
     */
    LoadedWeights loadWeights(ModelWeights weights);

    /**
     * Allocates a KV cache laid out as {@code spec} says ({@link KvCacheSpec#bytes()} bytes). Throws
     * {@link io.gossgpu.GossException} with the size and what is available when it cannot fit; never
     * crashes.
     */
    KvCache createKvCache(KvCacheSpec spec);

    // ---- ops ----------------------------------------------------------------------------------

    /** {@code out[i, :] = embedding[tokens[i], :]}. {@code out} is {@code T × H}; ids outside the vocabulary throw. */
    void embed(LoadedWeights w, int[] tokens, DeviceTensor out);

    /**
     * RMSNorm: {@code out[i, c] = x[i, c] / sqrt(mean_c'(x[i, c']²) + eps) · scale[c]}, eps = config's
     * {@code rms_norm_eps}; the mean of squares is accumulated in double. {@code out} may be {@code x}.
     */
    void rmsNorm(LoadedWeights w, int layer, NormKind which, DeviceTensor x, DeviceTensor out);

    /** A dense layer with bias (the SPI, kernels and knobs all say dense): {@code out[i, r] = Σ_c W[r, c] · x[i, c] + b[r]} (dot products in double). */
    void dense(LoadedWeights w, int layer, DenseKind which, DeviceTensor x, DeviceTensor out);

    /**
     * Q, K, V projections with bias, then RoPE on q and k: {@code q = Wq·x + bq}, {@code k = Wk·x + bk},
     * {@code v = Wv·x + bv}; for row {@code i} (position {@code p = batch.position(i)}), every head's
     * {@code hd} values are rotated half-split: with {@code x1 = head[0 .. hd/2)}, {@code x2 = head[hd/2 .. hd)},
     * {@code o1 = x1·cos − x2·sin}, {@code o2 = x2·cos + x1·sin}, where {@code cos = cos(p·invFreq[j])·concentration}
     * and likewise {@code sin}, from {@link Rope#invFreq} and {@link Rope#concentration} (YaRN).
     * {@code q} is {@code T × heads·hd}; {@code k}, {@code v} are {@code T × kv·hd} ({@code T = batch.rows()}). Nothing is
     * stored in any cache. Angles must be computed in double or taken from {@link Rope#cosSinTable} (float32
     * {@code p·invFreq} drifts).
     */
    void qkvRope(
            LoadedWeights w, int layer, DeviceTensor x, Batch batch, DeviceTensor q, DeviceTensor k, DeviceTensor v);

    /**
     * Causal grouped-query attention with sinks and (on sliding layers) a window, per sequence of the batch, then
     * stores each sequence's keys and values into its cache. For sequence {@code s} (cache {@code C}, first position
     * {@code start}, rows {@code r0 = batch.firstRow(s) .. r0 + n − 1}), its row {@code r0 + i} (position
     * {@code p = start + i}) and query head {@code h}, KV head {@code g = h / (heads / kv_heads)} (grouped, never
     * {@code h % kv_heads}): allowed key positions {@code j} are {@code lo ≤ j ≤ p} with {@code lo = max(0, p − W + 1)}
     * on sliding layers ({@code config.isSlidingLayer(layer)}, W = {@code sliding_window}) and {@code lo = 0} otherwise;
     * key/value {@code j} comes from {@code C} when {@code j < start}, from row {@code r0 + j − start} of
     * {@code k}/{@code v} otherwise (never from another sequence's rows). {@code s_j = q_h · k_{g,j} / sqrt(hd)}; with the
     * layer's sink logit {@code S[h]} (not scaled), {@code m = max(max_j s_j, S[h])},
     * {@code Z = Σ_j e^(s_j − m) + e^(S[h] − m)}, {@code out[r0 + i, h·hd + d] = Σ_j e^(s_j − m)/Z · v_{g,j}[d]}.
     * Afterwards positions {@code start .. start+n−1} are written to {@code C} (slot {@code pos % slots}; on ring layers
     * only the last {@code slots} of them). {@code out} is {@code T × heads·hd}.
     *
     * <p>A cache whose {@link KvCacheSpec#type()} is not F32 holds every key and value rounded as {@link KvType#round}
     * says, and the batch's own rows count as rounded too (as if stored before being read), so that a prefill attends
     * exactly as the same tokens decoded one by one. Backends may round {@code k} and {@code v} in place for that:
     * the caller does not read them afterwards.
     */
    void attention(
            LoadedWeights w, int layer, DeviceTensor q, DeviceTensor k, DeviceTensor v, Batch batch, DeviceTensor out);

    /**
     * MoE router: {@code g = Wr·x + br} ({@code E} logits per row); the {@code k = experts_per_token}
     * largest, sorted descending, ties to the lower expert index; weights = softmax over those k logits.
     * Result stays on the device in {@code out}.
     */
    void router(LoadedWeights w, int layer, DeviceTensor x, DeviceRouting out);

    /**
     * Mixture of experts without the residual: for each row and each chosen expert {@code e} with weight
     * {@code ω}: {@code a = gate_e·x + gateBias_e}, {@code b = up_e·x + upBias_e}, {@code a = min(a, L)},
     * {@code b = clamp(b, −L, L)} (L = {@code swiglu_limit}), {@code h = a·σ(1.702·a)·(b + 1)},
     * {@code y = down_e·h + downBias_e}; {@code out[i] = Σ ω·y}. Expert ids are read from {@code routing}
     * on the device. {@code out} is {@code T × H}.
     */
    void moe(LoadedWeights w, int layer, DeviceTensor x, DeviceRouting routing, DeviceTensor out);

    /** {@code out = a + b} elementwise; {@code out} may be {@code a} or {@code b}. */
    void add(DeviceTensor a, DeviceTensor b, DeviceTensor out);

    /**
     * Logits of rows {@code fromRow .. T−1} of the (already final-normed) {@code x}, returned to the host:
     * {@code logits[(i − fromRow)·vocab + r] = Σ_c U[r, c] · x[i, c]} (unembedding, no bias).
     */
    float[] logits(LoadedWeights w, DeviceTensor x, int fromRow);

    /**
     * The argmax over the vocabulary of each row's logits (as {@link #logits} defines them) for rows
     * {@code fromRow .. T−1}, ties to the lower token id; {@link TemperatureDraw#NOT_FINITE} for a row holding NaN or
     * an infinity (the executor then fails the step as it does on non-finite logits). Lets greedy decoding return one
     * int per step. {@link TemperatureDraw#argmax} is the reference.
     */
    int[] argmax(LoadedWeights w, DeviceTensor x, int fromRow);

    /**
     * Per row {@code i} of {@code fromRow .. T−1} of {@code x}: with {@code temperatures[i − fromRow] = 0} the argmax of
     * its logits (as {@link #argmax}), else plain temperature sampling of its logits (as {@link #logits} defines them)
     * with that temperature and the uniform draw {@code u = draws[i − fromRow] ∈ [0, 1)}: {@link TemperatureDraw#draw},
     * i.e. the smallest id {@code i} with {@code Σ_{j≤i} e_j > u·Z}, {@code e_j = exp((l_j − max)/temperature)}, in
     * double ({@link TemperatureDraw#NOT_FINITE} where {@code Z} is NaN). Lets a step of greedy and sampling sequences return one int per row. The default is the host path of
     * {@link DeclinedOps}: it reads the logits back and picks on the host; a device implementation may sum in another
     * order (it differs only where {@code u·Z} is within rounding of a cumulative sum). Declinable
     * ({@link BackendOp#SAMPLE}).
     */
    default int[] sample(LoadedWeights w, DeviceTensor x, int fromRow, double[] temperatures, double[] draws) {
        return DeclinedOps.hostSample(this, w, x, fromRow, temperatures, draws);
    }

    /**
     * Residual add fused with the RMSNorm that follows it: {@code sum = x + y} elementwise (as {@link #add}), then
     * {@code out = } {@link #rmsNorm}{@code (sum)} with the norm of {@code (layer, which)}; both written. {@code sum} may be
     * {@code x} or {@code y}, {@code out} may be {@code sum}. Must equal {@link #add} then {@link #rmsNorm} (the reference:
     * bit for bit). Declinable and declined by default ({@link BackendOp#ADD_RMS_NORM}): a backend that implements it
     * overrides {@link #supports} too; the default runs the decomposition.
     */
    default void addRmsNorm(
            LoadedWeights w,
            int layer,
            NormKind which,
            DeviceTensor x,
            DeviceTensor y,
            DeviceTensor sum,
            DeviceTensor out) {
        DeclinedOps.decomposeAddRmsNorm(this, w, layer, which, x, y, sum, out);
    }

    /**
     * Whether this backend runs {@code op} itself. Only a {@link BackendOp#declinable} op may be declined; the executor
     * then runs it another way ({@link DeclinedOps}: the decomposition of a fused op, or the host path). The default:
     * every op the SPI had before ops could be declined ({@link BackendOp#supportedByDefault}), no newer one.
     */
    default boolean supports(BackendOp op) {
        return op.supportedByDefault();
    }

    /**
     * Begins a step over the rows of {@code batch} (see the class comment): the calls that follow up to {@link #endStep}
     * are that forward pass. Nothing for a backend that runs every op as it comes.
     */
    default void beginStep(Batch batch) {}

    /**
     * Ends the step {@link #beginStep} began: whatever it deferred is submitted, and on return all of its work is
     * done (device errors surface here). Also called when an op of the step threw. The default finishes queued work.
     */
    default void endStep() {
        synchronize();
    }

    /** Finishes queued work (a no-op for synchronous backends). */
    default void synchronize() {}

    /**
     * How this backend's work ran since it was created, as counts that only grow, by name: for example CUDA graphs
     * captured and replayed, or Metal command buffers committed. The server exports them ({@code
     * goss_backend_work_total}); tests check a path was taken through them. Empty for a backend that counts nothing.
     * Unlike the ops, any thread may call it while another drives the backend (plain reads: at worst a step behind).
     */
    default java.util.SortedMap<String, Long> counters() {
        return java.util.Collections.emptySortedMap();
    }

    /**
     * This backend with the experts of {@code model} placed as {@code request} says. A host-memory backend holds them all
     * and returns itself; a GPU backend (the device layer) returns itself when they fit, else a split over itself and a
     * cpu backend made by {@code cpu} (only then). On a failure this backend is left to the caller to close.
     */
    default Backend placeExperts(
            ModelWeights model, ExpertPlacement request, int prefillChunk, java.util.function.Supplier<Backend> cpu) {
        request.checkLayers(model.layers().size());
        return this;
    }

    @Override
    void close();
}
