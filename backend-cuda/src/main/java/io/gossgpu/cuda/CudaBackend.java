package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceKvCache;
import io.gossgpu.backend.DeviceWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.cuda.CudaWeights.Dense;
import io.gossgpu.cuda.CudaWeights.Mx;
import io.gossgpu.device.AttentionParams;
import io.gossgpu.device.AttentionPipeline;
import io.gossgpu.device.BufferRouting;
import io.gossgpu.device.BufferTensor;
import io.gossgpu.device.DeviceBackend;
import io.gossgpu.device.Grid;
import io.gossgpu.device.OpParams.RopeParams;
import io.gossgpu.device.RopeOp;
import io.gossgpu.device.SampleParams;
import io.gossgpu.device.SmallOps;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The {@code cuda} backend: the device layer ({@link DeviceBackend}) over one device's primary context and its one
 * stream ({@link CudaDeviceDriver}), and every op of the SPI as CUDA kernels (backend-cuda/kernels, JIT-loaded from the
 * packaged PTX), launched by the device layer's pipelines with this backend's entry points and knobs: {@link DenseLauncher}
 * (embedding and dense layers by the device layer's {@link io.gossgpu.device.DensePipeline}; RMSNorm, add),
 * the device layer's {@link RopeOp}, {@link CudaAttention} (attention and cache store, run by the device layer's
 * {@link AttentionPipeline}), {@link MoeLauncher} (router top-k, experts) and
 * {@link SampleLauncher} (argmax, temperature sampling). Weights: {@link CudaWeights}.
 *
 * <p>Ops are queued without waiting. A decode step (a {@link #beginStep} of one token per sequence: the SPI's step
 * contract) is recorded up to its result read ({@link #logits}, {@link #argmax}, {@link #sample}) and run then as one
 * CUDA graph, captured on the first step of its batch shape and relaunched while the step's launches stay the same
 * ({@link LaunchQueue}); each sequence's position is read by the kernels from its slot of a device step buffer written
 * before the launch. Anything else that waits for
 * the device inside the step launches the recorded kernels one by one first. {@link #endStep} launches whatever is
 * still recorded and waits. {@code GOSS_CUDA_GRAPH=0} launches every kernel one by one.
 *
 * <p>Knobs ({@link CudaKnobs}, values of the {@link BackendOptions} it is created with, listed by
 * {@code goss-gpu info --backends}, swept by {@code goss-gpu tune}): {@code GOSS_CUDA_<KERNEL>_BLOCK} for DENSE
 * (the matvec), RMSNORM, ATTENTION, MOE, ARGMAX, ELEMENTWISE: threads per block, a multiple of 32 in 32..1024;
 * {@code GOSS_CUDA_DENSE_PREFILL_MIN_T} (default 9): the smallest T that takes the GEMM; {@code GOSS_CUDA_DENSE_TILE_T}
 * (32 or 64, default 64) and {@code GOSS_CUDA_DENSE_TILE_R} (64 or 128, default 64): the GEMM's tile;
 * {@code GOSS_CUDA_MOE_PREFILL_MIN_T}, {@code GOSS_CUDA_ATTENTION_TILED_MIN_T}, {@code GOSS_CUDA_ATTENTION_SPLITS} (see the
 * launchers); {@code GOSS_CUDA_GRAPH} (1 or 0).
 */
public final class CudaBackend extends DeviceBackend<CudaBuffer, CudaWeights> {
    public static final String NAME = "cuda";

    /** rope.cu's kernel: the device layer's {@link RopeOp} (q and k in one launch). */
    static final CudaEntry ROPE = new CudaEntry("rope", RopeOp.ROPE, 4, RopeParams.class);

    /** Every kernel entry point the launchers run. */
    static final List<CudaEntry> ENTRIES = Stream.of(DenseLauncher.ENTRIES, List.of(ROPE), CudaAttention.ENTRIES, MoeLauncher.ENTRIES,
            SampleLauncher.ENTRIES).flatMap(List::stream).toList();

    /** Sequences a step may hold: each has a position slot (int) in the step buffer. */
    static final int STEP_SEQUENCES = 1024;
    /** The step buffer: the positions. */
    private static final int STEP_BYTES = 4 * STEP_SEQUENCES;

    private final CudaContext ctx;
    /** The device's memory (package-private: the launchers' tests upload their matrices through it). */
    final CudaDeviceDriver device;
    private final LaunchQueue queue;
    private final CudaBuffer stepBuf;
    private final CudaModules modules;
    final DenseLauncher dense;
    private final RopeOp<Long> rope;
    final CudaAttention attention;
    private final CudaLauncher launch;
    final MoeLauncher moe;
    final SampleLauncher sampling;
    /** rmsnorm, add, add_rmsnorm, argmax and the router's topk_softmax, launched by the device layer as on every API. */
    private final SmallOps<Long> ops;

    /** A backend on device 0 with the knobs {@code options} set. */
    public static CudaBackend create(BackendOptions options) {
        return create(0, options);
    }

    /** A backend on device {@code ordinal}; a {@link GossException} with the reason when CUDA cannot run it. */
    public static CudaBackend create(int ordinal, BackendOptions options) {
        CudaDriver.Availability a = CudaDriver.backendAvailability(ordinal);
        if (!a.available()) throw new GossException("cuda backend unavailable: " + a.reason());
        for (var k : CudaKnobs.ALL) k.value(options); // an invalid knob fails before anything is allocated
        CudaContext ctx = CudaContext.open(ordinal);
        try {
            CudaBuffer step = ctx.allocate(STEP_BYTES);
            LaunchQueue queue = new LaunchQueue(ctx.stream(), step, STEP_SEQUENCES, CudaKnobs.GRAPH.value(options) == 1);
            return new CudaBackend(ctx, queue, step, options);
        } catch (RuntimeException e) {
            ctx.close(); // frees whatever was allocated in it
            throw e;
        }
    }

    private CudaBackend(CudaContext ctx, LaunchQueue queue, CudaBuffer step, BackendOptions options) {
        this(ctx, queue, step, new CudaDeviceDriver(ctx, queue), options);
    }

    private CudaBackend(CudaContext ctx, LaunchQueue queue, CudaBuffer step, CudaDeviceDriver device, BackendOptions options) {
        super(device, CudaWeights.class);
        this.ctx = ctx;
        this.device = device;
        this.queue = queue;
        this.stepBuf = step;
        this.modules = new CudaModules(ctx);
        try {
            CudaLauncher launch = new CudaLauncher(queue, modules, ENTRIES);
            dense = new DenseLauncher(launch, ctx.device().multiprocessors(), options, ctx.device().computeCapability());
            this.launch = launch;
            rope = new RopeOp<>(launch, p -> Grid.of(p.qHeads() + p.kHeads(), Math.min(p.tokens(), 65535),
                    Math.max(32, Math.min(1024, Grid.ceilDiv(p.headDim() / 2, 32) * 32))));
            attention = new CudaAttention(launch, options, ctx.device().computeCapability());
            moe = new MoeLauncher(launch, scratch, options, ctx.device().computeCapability());
            sampling = new SampleLauncher(launch, options);
            int rmsBlock = dense.rmsBlock, addBlock = dense.elementwiseBlock, argmaxBlock = sampling.argmaxBlock;
            ops = new SmallOps<>(launch, new SmallOps.Shapes(rows -> SmallOps.Shape.of(Grid.of(rows, rmsBlock)), // grid x: up to 2^31 − 1 rows
                    n -> SmallOps.Shape.of(Grid.of((int) Math.min(Grid.ceilDiv(n, addBlock), 65535L * 4), addBlock)), // grid-stride
                    rows -> SmallOps.Shape.of(Grid.of(SampleLauncher.ARGMAX_CHUNKS, Math.min(rows, 65535), argmaxBlock)),
                    tokens -> SmallOps.Shape.of(Grid.of(Grid.ceilDiv(tokens, 2), 64)))); // a warp per token
            CudaLauncher.checkBlock((CudaKernel) ops.kernel(SmallOps.RMSNORM), CudaKnobs.RMSNORM, rmsBlock);
            CudaLauncher.checkBlock((CudaKernel) ops.kernel(SmallOps.ADD_RMSNORM), CudaKnobs.RMSNORM, rmsBlock);
            CudaLauncher.checkBlock((CudaKernel) ops.kernel(SmallOps.ADD), CudaKnobs.ELEMENTWISE, addBlock);
            CudaLauncher.checkBlock((CudaKernel) ops.kernel(SmallOps.ARGMAX), CudaKnobs.ARGMAX, argmaxBlock);
        } catch (RuntimeException e) {
            modules.close();
            throw e;
        }
    }

    /**
     * Graphs captured and launched, kernels launched one by one, and the attention and MoE calls that took the tiled
     * kernels (prefill's path), since this backend was created.
     */
    @Override
    public SortedMap<String, Long> counters() {
        SortedMap<String, Long> m = new TreeMap<>();
        queue.count(m);
        m.put("attention_gqa_calls", attention.pipeline.gqaCalls());
        m.put("attention_mma_calls", attention.pipeline.mmaCalls());
        m.put("moe_tiled_calls", moe.pipeline.prefillCalls());
        m.put("moe_mma_calls", moe.pipeline.mma() ? moe.pipeline.prefillCalls() : 0);
        return m;
    }

    /** The launch knobs in effect, by environment-variable name. */
    @Override
    public SortedMap<String, Integer> knobs() {
        SortedMap<String, Integer> m = new TreeMap<>();
        m.put(CudaKnobs.DENSE.envName(), dense.denseBlock);
        m.put(CudaKnobs.RMSNORM.envName(), dense.rmsBlock);
        m.put(CudaKnobs.ATTENTION.envName(), attention.block);
        m.put(CudaKnobs.MOE.envName(), moe.moeBlock);
        m.put(CudaKnobs.ARGMAX.envName(), sampling.argmaxBlock);
        m.put(CudaKnobs.ELEMENTWISE.envName(), dense.elementwiseBlock);
        m.put(CudaKnobs.DENSE_PREFILL_MIN_T.envName(), dense.prefillMinT);
        m.put(CudaKnobs.DENSE_TILE_T.envName(), dense.tileT);
        m.put(CudaKnobs.DENSE_TILE_R.envName(), dense.tileR);
        m.put(CudaKnobs.DENSE_MMA.envName(), dense.mma() ? 1 : 0); // 0 below compute capability 8.0
        m.put(CudaKnobs.MOE_PREFILL_MIN_T.envName(), moe.pipeline.prefillMinT());
        m.put(CudaKnobs.MOE_MMA.envName(), moe.pipeline.mma() ? 1 : 0); // 0 below compute capability 8.0
        m.put(CudaKnobs.ATTENTION_PREFILL_MIN_T.envName(), attention.prefillMinT);
        m.put(CudaKnobs.ATTENTION_SPLITS.envName(), attention.splits);
        m.put(CudaKnobs.ATTENTION_MMA.envName(), attention.mma ? 1 : 0); // 0 below compute capability 8.0
        m.put(CudaKnobs.GRAPH.envName(), queue.graphsEnabled() ? 1 : 0);
        return m;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String deviceDescription() {
        CudaKernels.Manifest m = CudaKernels.manifest().orElseThrow();
        String arch = CudaKernels.archFor(ctx.device().computeCapability(), m.archs());
        return ctx.device().describe() + ", driver CUDA " + CudaDriver.versionString(CudaDriver.driverVersionNow())
                + ", " + arch + " PTX (ISA " + m.isaOf(arch) + ")";
    }

    @Override
    protected long weightBytes(ModelWeights m) {
        return CudaWeights.deviceBytes(m);
    }

    @Override
    protected CudaWeights upload(ModelWeights m) {
        device.synchronize();
        return new CudaWeights(this, m);
    }

    /** A decode step (one token of each sequence) is recorded, to run as one CUDA graph (per batch shape) at its result read. */
    @Override
    public void beginStep(Batch batch) {
        queue.beginStep(batch.rows() == batch.size());
    }

    @Override
    public void endStep() {
        queue.endStep();
        device.synchronize();
    }

    // ---- launchers ------------------------------------------------------------------------------

    private static long at(BufferTensor<CudaBuffer> t) {
        return t.buffer().address();
    }

    /** A layer's bias as the dense pipeline takes it: null for none (address 0). */
    private static Long bias(Long address) {
        return address == null || address == 0 ? null : address;
    }

    @Override
    protected void runEmbed(CudaWeights w, int[] tokens, BufferTensor<CudaBuffer> out) {
        embed(w.tensors.embedding(), tokens, out);
    }

    /** Rows {@code tokens} of {@code table} into {@code out}. */
    void embed(Dense table, int[] tokens, BufferTensor<CudaBuffer> out) {
        CudaBuffer ids = scratch.ensure("token ids", 4L * tokens.length);
        // a blocking copy on the stream (not the driver's write, which would end a recorded step): after every launched
        // kernel, before this step's recorded ones
        ids.copyFrom(MemorySegment.ofArray(tokens));
        dense.pipeline.embed(table.matrix(), ids.address(), 0, tokens.length, at(out));
    }

    @Override
    protected void runRmsNorm(CudaWeights w, int layer, NormKind which, BufferTensor<CudaBuffer> x, BufferTensor<CudaBuffer> out) {
        ops.rmsnorm(at(x), w.tensors.norm(layer, which), at(out), x.rows(), x.cols(), w.config().rmsNormEps());
    }

    @Override
    protected void runAddRmsNorm(CudaWeights w, int layer, NormKind which, BufferTensor<CudaBuffer> x, BufferTensor<CudaBuffer> y,
                                 BufferTensor<CudaBuffer> sum, BufferTensor<CudaBuffer> out) {
        ops.addRmsnorm(at(x), at(y), w.tensors.norm(layer, which), at(sum), at(out), x.rows(), x.cols(), w.config().rmsNormEps());
    }

    @Override
    protected void runDense(CudaWeights w, int layer, DenseKind which, BufferTensor<CudaBuffer> x, BufferTensor<CudaBuffer> out) {
        var l = w.tensors.layer(layer);
        dense.pipeline.dense(l.dense(which).matrix(), bias(l.bias(which)), at(x), x.rows(), x.cols(), at(out), out.rows(), out.cols());
    }

    /** Q, K and V as one linear over the layer's {@code [q; k; v]} matrix, then RoPE on q and k (one launch), sequence by sequence. */
    @Override
    protected void runQkvRope(CudaWeights w, int layer, BufferTensor<CudaBuffer> x, Batch batch, BufferTensor<CudaBuffer> q,
                              BufferTensor<CudaBuffer> k, BufferTensor<CudaBuffer> v) {
        ModelConfig c = w.config();
        int T = x.rows(), hd = c.headDim();
        var l = w.tensors.layer(layer);
        Dense qkv = l.dense(DenseKind.Q).rows(0, c.qDim() + 2 * c.kvDim()); // Q's rows start the fused matrix
        dense.pipeline.run(qkv.matrix(), bias(l.bias(DenseKind.Q)), at(x), 0, T, at(q), c.qDim(), at(k), c.kvDim(), at(v));
        long table = w.rope(batch.endPosition()).address();
        for (int s = 0; s < batch.size(); s++) {
            int row0 = batch.firstRow(s), n = batch.tokens(s);
            long pos = launch.position(s, batch.start(s));
            rope.run(at(q), at(k), table, pos, 0, new RopeParams(n, c.numAttentionHeads(), c.numKeyValueHeads(), hd, row0));
        }
    }

    @Override
    protected void runAttention(CudaWeights w, int layer, BufferTensor<CudaBuffer> q, BufferTensor<CudaBuffer> k, BufferTensor<CudaBuffer> v,
                                Span<CudaBuffer> span, BufferTensor<CudaBuffer> out) {
        DeviceKvCache<CudaBuffer> cache = span.cache();
        attention.pipeline.run(new AttentionPipeline.Buffers<>(at(q), at(k), at(v), cache.keys(layer).address(), cache.values(layer).address(),
                        w.tensors.layer(layer).sinks(), at(out)), AttentionParams.of(w.config(), layer, cache.spec().slots(layer), span.rows(), span.row0()),
                span.start(), launch.position(span.index(), span.start()), 0, (name, bytes) -> scratch.ensure(name, bytes).address());
    }

    @Override
    protected void runRouter(CudaWeights w, int layer, BufferTensor<CudaBuffer> x, BufferRouting<CudaBuffer> out) {
        var l = w.tensors.layer(layer);
        int T = x.rows(), experts = w.config().numExperts();
        CudaBuffer logits = scratch.ensure("router logits", 4L * T * experts);
        dense.pipeline.run(l.dense(DenseKind.ROUTER).matrix(), bias(l.bias(DenseKind.ROUTER)), at(x), 0, T, logits.address());
        ops.topk(logits.address(), out.ids().address(), out.weights().address(), T, experts, out.k());
    }

    @Override
    protected void runMoe(CudaWeights w, int layer, BufferTensor<CudaBuffer> x, BufferRouting<CudaBuffer> r, BufferTensor<CudaBuffer> out) {
        DeviceWeights.Layer<Long, Dense, Mx> l = w.tensors.layer(layer);
        moe.moe(w.config(), l, at(x), x.rows(), r, at(out));
    }

    @Override
    protected void runAdd(BufferTensor<CudaBuffer> a, BufferTensor<CudaBuffer> b, BufferTensor<CudaBuffer> out) {
        ops.add(at(a), at(b), at(out), (long) a.rows() * a.cols());
    }

    @Override
    protected void runLogits(CudaWeights w, BufferTensor<CudaBuffer> x, int fromRow, int n, CudaBuffer out) {
        dense.pipeline.run(w.tensors.unembedding().matrix(), null, at(x), fromRow, n, out.address());
    }

    @Override
    protected void runArgmax(CudaBuffer logits, int n, int vocab, CudaBuffer ids) {
        CudaBuffer work = scratch.ensure("argmax work", SampleLauncher.argmaxWorkBytes(n));
        if (work != argmaxWork) { // a new buffer: its row counters start at zero (the kernel leaves them so)
            work.zero();
            argmaxWork = work;
        }
        ops.argmax(logits.address(), ids.address(), work.address(), n, vocab);
    }

    /** The argmax work buffer cleared last (see {@link #runArgmax}). */
    private CudaBuffer argmaxWork;

    @Override
    protected void runSample(CudaBuffer logits, CudaBuffer draws, CudaBuffer work, SampleParams p) {
        sampling.pipeline.run(logits.address(), draws.address(), work.address(), p);
    }

    @Override
    protected void closeDevice() {
        try {
            queue.close();
            stepBuf.close();
            modules.close();
        } finally {
            ctx.close(); // releasing the primary context frees whatever tensors and caches are still open
        }
    }
}
