package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Batch;
import io.gossgpu.device.AttentionPipeline;
import io.gossgpu.device.DeviceBackend;
import io.gossgpu.device.Grid;
import io.gossgpu.device.OpParams.RopeParams;
import io.gossgpu.device.Pipelines;
import io.gossgpu.device.RopeOp;
import io.gossgpu.device.SmallOps;
import io.gossgpu.model.ModelWeights;
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
public final class CudaBackend extends DeviceBackend<CudaBuffer, Long> {
    public static final String NAME = "cuda";

    /** rope.cu's kernel: the device layer's {@link RopeOp} (q and k in one launch). */
    static final CudaEntry ROPE = new CudaEntry("rope", RopeOp.ROPE, 4, RopeParams.class);

    /** Every kernel entry point the launchers run. */
    static final List<CudaEntry> ENTRIES = Stream.of(
                    DenseLauncher.ENTRIES,
                    List.of(ROPE),
                    CudaAttention.ENTRIES,
                    MoeLauncher.ENTRIES,
                    SampleLauncher.ENTRIES)
            .flatMap(List::stream)
            .toList();

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
    final CudaAttention attention;
    final MoeLauncher moe;
    final SampleLauncher sampling;
    /** The pipelines as the device layer runs them: a buffer is passed as its device address. */
    private final Pipelines<CudaBuffer, Long> pipelines;

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
            LaunchQueue queue =
                    new LaunchQueue(ctx.stream(), step, STEP_SEQUENCES, CudaKnobs.GRAPH.value(options) == 1);
            return new CudaBackend(ctx, queue, step, options);
        } catch (RuntimeException e) {
            ctx.close(); // frees whatever was allocated in it
            throw e;
        }
    }

    private CudaBackend(CudaContext ctx, LaunchQueue queue, CudaBuffer step, BackendOptions options) {
        this(ctx, queue, step, new CudaDeviceDriver(ctx, queue), options);
    }

    private CudaBackend(
            CudaContext ctx, LaunchQueue queue, CudaBuffer step, CudaDeviceDriver device, BackendOptions options) {
        super(device, CudaWeights.class);
        this.ctx = ctx;
        this.device = device;
        this.queue = queue;
        this.stepBuf = step;
        this.modules = new CudaModules(ctx);
        try {
            CudaLauncher launch = new CudaLauncher(queue, modules, ENTRIES);
            dense = new DenseLauncher(
                    launch,
                    ctx.device().multiprocessors(),
                    options,
                    ctx.device().computeCapability());
            RopeOp<Long> rope = new RopeOp<>(
                    launch,
                    p -> Grid.of(
                            p.qHeads() + p.kHeads(),
                            Math.min(p.tokens(), 65535),
                            Math.max(32, Math.min(1024, Grid.ceilDiv(p.headDim() / 2, 32) * 32))));
            attention = new CudaAttention(launch, options, ctx.device().computeCapability());
            moe = new MoeLauncher(launch, options, ctx.device().computeCapability());
            sampling = new SampleLauncher(launch, options);
            int rmsBlock = dense.rmsBlock, addBlock = dense.elementwiseBlock, argmaxBlock = sampling.argmaxBlock;
            // rmsnorm, add, add_rmsnorm, argmax and the router's topk_softmax, as on every API
            SmallOps<Long> ops = new SmallOps<>(
                    launch,
                    new SmallOps.Shapes(
                            rows -> SmallOps.Shape.of(Grid.of(rows, rmsBlock)), // grid x: up to 2^31 − 1 rows
                            // grid-stride
                            n -> SmallOps.Shape.of(
                                    Grid.of((int) Math.min(Grid.ceilDiv(n, addBlock), 65535L * 4), addBlock)),
                            rows -> SmallOps.Shape.of(
                                    Grid.of(SampleLauncher.ARGMAX_CHUNKS, Math.min(rows, 65535), argmaxBlock)),
                            tokens -> SmallOps.Shape.of(Grid.of(Grid.ceilDiv(tokens, 2), 64)))); // a warp per token
            CudaLauncher.checkBlock((CudaKernel) ops.kernel(SmallOps.RMSNORM), CudaKnobs.RMSNORM, rmsBlock);
            CudaLauncher.checkBlock((CudaKernel) ops.kernel(SmallOps.ADD_RMSNORM), CudaKnobs.RMSNORM, rmsBlock);
            CudaLauncher.checkBlock((CudaKernel) ops.kernel(SmallOps.ADD), CudaKnobs.ELEMENTWISE, addBlock);
            CudaLauncher.checkBlock((CudaKernel) ops.kernel(SmallOps.ARGMAX), CudaKnobs.ARGMAX, argmaxBlock);
            pipelines = new Pipelines<>(
                    CudaBuffer::address,
                    new CudaStaging(launch, scratch),
                    dense.pipeline,
                    ops,
                    rope,
                    attention.pipeline,
                    moe.pipeline,
                    sampling.pipeline,
                    SampleLauncher::argmaxWorkBytes);
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

    @Override
    protected Pipelines<CudaBuffer, Long> pipelines() {
        return pipelines;
    }

    /** Queues argmax.cu on {@code n} rows of {@code vocab} logits (for the kernel's test). */
    void argmaxRows(CudaBuffer logits, int n, int vocab, CudaBuffer ids) {
        queueArgmax(logits, n, vocab, ids);
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
