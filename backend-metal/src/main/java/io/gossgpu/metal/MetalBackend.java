package io.gossgpu.metal;

import static io.gossgpu.metal.bindings.goss_metal_h.*;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.KvType;
import io.gossgpu.device.AttentionPipeline;
import io.gossgpu.device.AttentionShapes;
import io.gossgpu.device.DensePipeline;
import io.gossgpu.device.DenseShapes;
import io.gossgpu.device.DeviceBackend;
import io.gossgpu.device.Grid;
import io.gossgpu.device.KernelSource;
import io.gossgpu.device.MoeParams;
import io.gossgpu.device.MoePipeline;
import io.gossgpu.device.MoeShapes;
import io.gossgpu.device.MoeShapes.Shape;
import io.gossgpu.device.Pipelines;
import io.gossgpu.device.RopeOp;
import io.gossgpu.device.SmallOps;
import io.gossgpu.metal.MetalDriver.Buf;
import io.gossgpu.metal.MetalLauncher.Kernel;
import io.gossgpu.model.ModelWeights;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The Metal backend: the device layer ({@link DeviceBackend}) over shared Metal buffers ({@link MetalDriver}) and
 * the kernels of {@code goss.metal}. Every op encodes dispatches into the one pending command buffer (a serial
 * compute encoder, so each dispatch sees the previous one's writes); it is committed only when the host needs a
 * result or before host memory the pending work uses is rewritten. A step of the SPI's step contract starts a
 * command buffer of its own ({@link #beginStep} commits what came before) and is committed at its result read, so a
 * decode step is one command buffer; {@link #endStep} commits anything left. Weights: {@link MetalWeights}.
 */
final class MetalBackend extends DeviceBackend<Buf, Buf> {
    private final MetalDriver metal;
    private final MemorySegment dev, queue, lib;
    private final String description;
    private final BackendOptions options;
    private final Arena arena = Arena.ofShared();
    private final MetalLauncher launcher;
    /** Batches of at least this many tokens use the tiled dense kernel (knob {@code GOSS_METAL_DENSE_PREFILL_MIN_T}). */
    private final int prefillMinT;
    /** Batches of at least this many tokens take the MoE grouped by expert (knob {@code GOSS_METAL_MOE_PREFILL_MIN_T}). */
    private final int moePrefillMinT;
    /**
     * The pipelines as the device layer runs them: a buffer is its own kernel argument; host values go through the
     * driver's staging ring (no commit); goss.metal has no sampling kernels yet, so the host samples.
     */
    private final Pipelines<Buf, Buf> pipelines;
    /** Wrap F32/BF16 matrices of memory-mapped checkpoints instead of copying them ({@code GOSS_METAL_NO_COPY}, default on). */
    private final boolean noCopy;

    MetalBackend(boolean emulator, BackendOptions options) {
        this(open(emulator), emulator, options);
    }

    private MetalBackend(MetalDriver metal, boolean emulator, BackendOptions options) {
        super(metal, MetalWeights.class);
        this.metal = metal;
        this.options = options;
        this.dev = metal.device();
        this.queue = metal.queue();
        this.description = metal.deviceName();
        prefillMinT = MetalKnobs.DENSE_PREFILL_MIN_T.value(options);
        moePrefillMinT = MetalKnobs.MOE_PREFILL_MIN_T.value(options);
        noCopy = MetalKnobs.NO_COPY.value(options) == 1;
        Path metallib = emulator ? null : MetalNative.metallib();
        lib = metallib != null
                ? goss_mtl_library_from_file(dev, arena.allocateFrom(metallib.toString()))
                : goss_mtl_library_from_source(dev, arena.allocateFrom(KernelSource.inlined("metal", "goss.metal")));
        if (lib.equals(MemorySegment.NULL))
            throw new GossException("metal: cannot build the kernel library: " + MetalNative.lastError());
        launcher = new MetalLauncher(metal, lib, options);
        // embed and every dense layer: dense (a simdgroup per row) for decode, dense_tiled for prefill
        DensePipeline<Buf> dense = new DensePipeline<>(
                launcher,
                new DenseShapes(
                        java.util.List.of(),
                        f -> DensePipeline.EMBED,
                        f -> DensePipeline.DENSE,
                        f -> "dense_tiled",
                        null,
                        prefillMinT,
                        false,
                        false,
                        0,
                        (cols, tokens) -> DenseShapes.Shape.of(groups(kernel(MetalKernel.EMBED), tokens)),
                        (rows, tokens) -> DenseShapes.Shape.of(simdgroups(kernel(MetalKernel.DENSE), rows)),
                        // prefill: 32 rows × 8 tokens per threadgroup, staged through threadgroup memory
                        (rows, tokens) -> DenseShapes.Shape.of(groups(
                                kernel(MetalKernel.DENSE_TILED), (long) ((rows + 31) / 32) * ((tokens + 7) / 8))),
                        null));
        MoePipeline<Buf> moe = new MoePipeline<>(launcher, moeShapes(), moePrefillMinT);
        AttentionPipeline<Buf> attention = new AttentionPipeline<>(launcher, attentionShapes());
        RopeOp<Buf> rope = new RopeOp<>(
                launcher, p -> Grid.items((long) p.tokens() * (p.qHeads() + p.kHeads()) * (p.headDim() / 2)));
        SmallOps<Buf> ops = new SmallOps<>(
                launcher,
                new SmallOps.Shapes(
                        rows -> SmallOps.Shape.of(groups(kernel(MetalKernel.RMSNORM), rows)),
                        n -> SmallOps.Shape.of(Grid.items(n)),
                        rows -> SmallOps.Shape.of(groups(kernel(MetalKernel.ARGMAX), rows)),
                        tokens -> SmallOps.Shape.of(Grid.items(tokens))));
        pipelines = new Pipelines<>(b -> b, metal, dense, ops, rope, attention, moe, null, null);
    }

    /** The device and its queue (the native library loaded first). */
    private static MetalDriver open(boolean emulator) {
        MetalNative.ensureLoaded(emulator);
        MemorySegment dev = goss_mtl_device_create();
        if (dev.equals(MemorySegment.NULL)) throw new GossException("metal: no device: " + MetalNative.lastError());
        return new MetalDriver(dev, goss_mtl_queue_create(dev), MetalNative.deviceLine(dev));
    }

    @Override
    public String name() {
        return MetalBackendProvider.NAME;
    }

    @Override
    public String deviceDescription() {
        return description;
    }

    /** The launch knobs in effect, by environment-variable name: each kernel's threadgroup size, the prefill threshold. */
    @Override
    public SortedMap<String, Integer> knobs() {
        SortedMap<String, Integer> m = new TreeMap<>();
        for (MetalKernel k : MetalKernel.values())
            m.put(k.threadgroup.envName(), launcher.kernel(k).threads());
        m.put(MetalKnobs.DENSE_PREFILL_MIN_T.envName(), prefillMinT);
        m.put(MetalKnobs.MOE_PREFILL_MIN_T.envName(), pipelines.moe().prefillMinT());
        return m;
    }

    /** Command buffers committed, and the GPU time they took (microseconds), since this backend was created. */
    @Override
    public SortedMap<String, Long> counters() {
        return new TreeMap<>(
                Map.of("command_buffers", metal.commits(), "gpu_microseconds", Math.round(metal.gpuSeconds() * 1e6)));
    }

    @Override
    protected long weightBytes(ModelWeights m) {
        return MetalWeights.deviceBytes(m);
    }

    @Override
    protected MetalWeights upload(ModelWeights m) {
        return new MetalWeights(this, metal, m, noCopy);
    }

    /** The step's dispatches go into a command buffer of their own, committed at its result read or {@link #endStep}. */
    @Override
    public void beginStep(Batch batch) {
        metal.flush();
    }

    @Override
    public void endStep() {
        metal.flush();
    }

    // ---- launches -----------------------------------------------------------------------------------

    private Kernel kernel(MetalKernel kernel) {
        return launcher.kernel(kernel);
    }

    /** Enough threadgroups of {@code k} for one simdgroup (32 threads) per item. */
    private static Grid simdgroups(Kernel k, long items) {
        int perGroup = k.threads() / 32;
        return Grid.of((items + perGroup - 1) / perGroup, k.threads());
    }

    /** {@code groups} threadgroups of {@code k}'s threadgroup size. */
    private static Grid groups(Kernel k, long groups) {
        return Grid.of(groups, k.threads());
    }

    @Override
    protected Pipelines<Buf, Buf> pipelines() {
        return pipelines;
    }

    /**
     * How attention.metal runs: one simdgroup per (row, head) over all its keys (no split kernels), then kv_store (a
     * thread per number, per 32-number block for Q8_0); on a typed cache kv_round first (a thread per 32-number block of
     * a row), so the backend stores every {@link KvType}.
     */
    private static AttentionShapes attentionShapes() {
        return new AttentionShapes(
                (p, start) -> new AttentionShapes.Plan(AttentionPipeline.ATTENTION, 1, 1),
                p -> new AttentionShapes.Shape(Grid.of((long) p.tokens() * p.heads(), 32)),
                null,
                null,
                null,
                p -> new AttentionShapes.Shape(Grid.items((long) (p.tokens() - p.first())
                        * (p.type() == KvType.Q8_0 ? KvType.q8Blocks(p.kvDim()) : p.kvDim()))),
                null,
                p -> new AttentionShapes.Shape(Grid.items((long) p.tokens() * KvType.q8Blocks(p.kvDim()))));
    }

    /** How moe.metal spreads the MoE: a simdgroup per output for decode; tiles of 32 rows × 8 pairs of one expert for prefill. */
    private MoeShapes moeShapes() {
        // segments are padded to 8 pairs: at most this many tiles of pairs
        java.util.function.ToLongFunction<MoeParams> pairTiles = p -> (p.slots() + 7) / 8 + p.experts();
        return new MoeShapes(
                p -> Shape.of(simdgroups(kernel(MetalKernel.MOE_GATE_UP), (long) p.slots() * p.inter())),
                p -> Shape.of(simdgroups(kernel(MetalKernel.MOE_DOWN), (long) p.tokens() * p.hidden())),
                p -> Shape.of(Grid.items(p.experts())), // moe_sort: a thread per expert
                p -> Shape.of(groups(
                        kernel(MetalKernel.MOE_GATE_UP_TILED), pairTiles.applyAsLong(p) * ((p.inter() + 31) / 32))),
                p -> Shape.of(groups(
                        kernel(MetalKernel.MOE_DOWN_TILED), pairTiles.applyAsLong(p) * ((p.hidden() + 31) / 32))),
                p -> Shape.of(Grid.items((long) p.tokens() * p.hidden())), // moe_combine
                p -> true);
    }

    @Override
    protected void closeDevice() {
        metal.close();
        launcher.close();
        goss_mtl_library_release(lib);
        goss_mtl_queue_release(queue);
        goss_mtl_device_release(dev);
        arena.close();
    }
}
