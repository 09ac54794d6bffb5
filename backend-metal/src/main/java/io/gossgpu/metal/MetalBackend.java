package io.gossgpu.metal;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOp;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceKvCache;
import io.gossgpu.backend.DeviceWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.device.BufferRouting;
import io.gossgpu.device.BufferTensor;
import io.gossgpu.device.DeviceBackend;
import io.gossgpu.device.KernelParams;
import io.gossgpu.device.KernelSource;
import io.gossgpu.metal.MetalDriver.Buf;
import io.gossgpu.metal.MetalWeights.Dense;
import io.gossgpu.metal.MetalWeights.Experts;
import io.gossgpu.metal.MetalParams.*;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

import static io.gossgpu.metal.bindings.goss_metal_h.*;

/**
 * The Metal backend: the device layer ({@link DeviceBackend}) over shared Metal buffers ({@link MetalDriver}) and
 * the kernels of {@code goss.metal}. Every op encodes dispatches into the one pending command buffer (a serial
 * compute encoder, so each dispatch sees the previous one's writes); it is committed only when the host needs a
 * result or before host memory the pending work uses is rewritten. A step of the SPI's step contract starts a
 * command buffer of its own ({@link #beginStep} commits what came before) and is committed at its result read, so a
 * decode step is one command buffer; {@link #endStep} commits anything left. Weights: {@link MetalWeights}.
 */
final class MetalBackend extends DeviceBackend<Buf, MetalWeights> {
    private final MetalDriver metal;
    private final MemorySegment dev, queue, lib;
    private final String description;
    private final BackendOptions options;
    private final Map<MetalKernel, Kernel> kernels = new EnumMap<>(MetalKernel.class);
    private final Arena arena = Arena.ofShared();
    private final MemorySegment paramBytes = arena.allocate(256, 16);
    /** Batches of at least this many tokens use the tiled prefill kernels (knob {@code GOSS_METAL_PREFILL_MIN_T}). */
    private final int prefillMinT;
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
        prefillMinT = Knobs.PREFILL_MIN_T.value(options);
        noCopy = Knobs.NO_COPY.value(options) == 1;
        Path metallib = emulator ? null : MetalNative.metallib();
        lib = metallib != null ? goss_mtl_library_from_file(dev, arena.allocateFrom(metallib.toString()))
                : goss_mtl_library_from_source(dev, arena.allocateFrom(KernelSource.inlined("metal", "goss.metal")));
        if (lib.equals(MemorySegment.NULL)) throw new GossException("metal: cannot build the kernel library: " + MetalNative.lastError());
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
        for (MetalKernel k : MetalKernel.values()) m.put(k.threadgroup.envName(), kernel(k).threads());
        m.put(Knobs.PREFILL_MIN_T.envName(), prefillMinT);
        return m;
    }

    /** Command buffers committed, and the GPU time they took (microseconds), since this backend was created. */
    @Override
    public SortedMap<String, Long> counters() {
        return new TreeMap<>(Map.of("command_buffers", metal.commits(), "gpu_microseconds", Math.round(metal.gpuSeconds() * 1e6)));
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

    // ---- kernels and dispatches --------------------------------------------------------------------

    /** A compute pipeline and its threadgroup size (knob {@code GOSS_METAL_<NAME>_TG}). */
    record Kernel(String name, MemorySegment pipeline, int maxThreads, int threads) {}

    Kernel kernel(MetalKernel kernel) {
        Kernel k = kernels.get(kernel);
        if (k != null) return k;
        String name = kernel.function;
        MemorySegment p = goss_mtl_pipeline_create(lib, arena.allocateFrom(name));
        if (p.equals(MemorySegment.NULL)) throw new GossException("metal: kernel " + name + ": " + MetalNative.lastError());
        int max = goss_mtl_pipeline_max_threads(p);
        k = new Kernel(name, p, max, kernel.threads(options, max));
        kernels.put(kernel, k);
        return k;
    }

    /** Records one dispatch: {@code groups} threadgroups of {@code k.threads()} threads (or {@code threads} when given). */
    private final class Dispatch {
        private final MemorySegment c;
        private final Kernel k;

        Dispatch(MetalKernel kernel) {
            this.k = kernel(kernel);
            this.c = metal.commandBuffer();
            goss_mtl_cmd_set_pipeline(c, k.pipeline());
        }

        Dispatch buf(int index, Buf b) {
            return buf(index, b, 0);
        }

        Dispatch buf(int index, Buf b, long offset) {
            goss_mtl_cmd_set_buffer(c, index, b.handle, offset);
            return this;
        }

        /** The kernel's params struct ({@link MetalParams}), copied into the command by setBytes. */
        Dispatch params(int index, KernelParams p) {
            MemorySegment bytes = p.writeTo(paramBytes);
            goss_mtl_cmd_set_bytes(c, index, bytes, bytes.byteSize());
            return this;
        }

        void run(long groups, int threads) {
            if (groups <= 0) return;
            if (groups > Integer.MAX_VALUE) throw new GossException("metal: kernel " + k.name() + ": " + groups + " threadgroups");
            if (goss_mtl_cmd_dispatch(c, (int) groups, 1, 1, threads, 1, 1) != 0)
                throw new GossException("metal: kernel " + k.name() + ": " + MetalNative.lastError());
        }

        void run(long groups) {
            run(groups, k.threads());
        }

        /** Enough threadgroups for one thread per item. */
        void runThreads(long items) {
            run((items + k.threads() - 1) / k.threads());
        }

        /** Enough threadgroups for one simdgroup per item. */
        void runSimdgroups(long items) {
            int perGroup = k.threads() / 32;
            run((items + perGroup - 1) / perGroup);
        }
    }

    // ---- launchers ---------------------------------------------------------------------------------

    @Override
    protected void runEmbed(MetalWeights w, int[] tokens, BufferTensor<Buf> out) {
        MetalDriver.Staged s = metal.stage(tokens); // not a write through the driver: that would commit the step
        Dense e = w.tensors.embedding();
        new Dispatch(MetalKernel.EMBED).buf(0, e.buf(), e.offset()).buf(1, s.buf(), s.offset()).buf(2, out.buffer())
                .params(3, new EmbedParams(w.config().hiddenSize(), e.fmt())).run(tokens.length);
    }

    @Override
    protected void runRmsNorm(MetalWeights w, int layer, NormKind which, BufferTensor<Buf> x, BufferTensor<Buf> out) {
        new Dispatch(MetalKernel.RMSNORM).buf(0, x.buffer()).buf(1, w.tensors.norm(layer, which)).buf(2, out.buffer())
                .params(3, new NormParams(x.cols(), w.config().rmsNormEps())).run(x.rows());
    }

    /** out[t, r] = Σ_c W[r, c]·x[t, c] (+ bias[r]) for {@code T} rows of x starting at byte {@code xOffset}. */
    private void matvec(Dense m, Buf bias, Buf x, long xOffset, int T, Buf out) {
        boolean tiled = T >= prefillMinT; // prefill: 32 rows × 8 tokens per threadgroup, staged through threadgroup memory
        Dispatch d = new Dispatch(tiled ? MetalKernel.DENSE_TILED : MetalKernel.DENSE).buf(0, m.buf(), m.offset()).buf(1, bias == null ? m.buf() : bias)
                .buf(2, x, xOffset).buf(3, out).params(4, new LinearParams(m.rows(), m.cols(), T, m.fmt(), bias == null ? 0 : 1, m.cols(), m.rows()));
        if (tiled) d.run((long) ((m.rows() + 31) / 32) * ((T + 7) / 8));
        else d.runSimdgroups(m.rows());
    }

    @Override
    protected void runLinear(MetalWeights w, int layer, DenseKind which, BufferTensor<Buf> x, BufferTensor<Buf> out) {
        matvec(w.tensors.layer(layer).dense(which), w.tensors.layer(layer).bias(which), x.buffer(), 0, x.rows(), out.buffer());
    }

    @Override
    protected void runQkvRope(MetalWeights w, int layer, BufferTensor<Buf> x, Batch batch, BufferTensor<Buf> q, BufferTensor<Buf> k,
                              BufferTensor<Buf> v) {
        ModelConfig c = w.config();
        Buf table = w.rope(batch.endPosition()); // may commit: before this op's dispatches
        runLinear(w, layer, DenseKind.Q, x, q);
        runLinear(w, layer, DenseKind.K, x, k);
        runLinear(w, layer, DenseKind.V, x, v);
        for (int s = 0; s < batch.size(); s++) {
            rope(q, batch.firstRow(s), batch.tokens(s), c.numAttentionHeads(), c.headDim(), batch.start(s), table);
            rope(k, batch.firstRow(s), batch.tokens(s), c.numKeyValueHeads(), c.headDim(), batch.start(s), table);
        }
    }

    /** RoPE on rows {@code row0 .. row0 + rows − 1} of {@code x}, at positions {@code start ..}. */
    private void rope(BufferTensor<Buf> x, int row0, int rows, int heads, int hd, int start, Buf table) {
        new Dispatch(MetalKernel.ROPE).buf(0, x.buffer(), 4L * row0 * x.cols()).buf(1, table).params(2, new RopeParams(rows, heads, hd, start, x.cols()))
                .runThreads((long) rows * heads * (hd / 2));
    }

    /** One sequence of the batch: its rows of q, k, v and out (buffers bound at its first row) over its cache. */
    @Override
    protected void runAttention(MetalWeights w, int layer, BufferTensor<Buf> q, BufferTensor<Buf> k, BufferTensor<Buf> v,
                                Span<Buf> span, BufferTensor<Buf> out) {
        ModelConfig c = w.config();
        DeviceKvCache<Buf> cache = span.cache();
        int T = span.rows(), start = span.start(), slots = cache.spec().slots(layer);
        long qRow = 4L * span.row0() * c.qDim(), kvRow = 4L * span.row0() * c.kvDim();
        int window = c.isSlidingLayer(layer) ? c.slidingWindow() : 0;
        new Dispatch(MetalKernel.ATTENTION).buf(0, q.buffer(), qRow).buf(1, k.buffer(), kvRow).buf(2, v.buffer(), kvRow).buf(3, cache.keys(layer))
                .buf(4, cache.values(layer)).buf(5, w.tensors.layer(layer).sinks()).buf(6, out.buffer(), qRow)
                .params(7, new AttnParams(T, start, c.numAttentionHeads(), c.headDim(), c.queriesPerKvHead(), slots, window,
                        c.qDim(), c.kvDim(), (float) (1 / Math.sqrt(c.headDim()))))
                .run((long) T * c.numAttentionHeads(), 32);
        int first = Math.max(0, T - slots);
        new Dispatch(MetalKernel.KV_STORE).buf(0, k.buffer(), kvRow).buf(1, v.buffer(), kvRow).buf(2, cache.keys(layer)).buf(3, cache.values(layer))
                .params(4, new StoreParams(T, start, slots, c.kvDim(), first)).runThreads((long) (T - first) * c.kvDim());
    }

    @Override
    protected void runRouter(MetalWeights w, int layer, BufferTensor<Buf> x, BufferRouting<Buf> r) {
        ModelConfig c = w.config();
        Buf logits = scratch.ensure("router logits", 4L * x.rows() * c.numExperts());
        matvec(w.tensors.layer(layer).dense(DenseKind.ROUTER), w.tensors.layer(layer).bias(DenseKind.ROUTER), x.buffer(), 0, x.rows(), logits);
        new Dispatch(MetalKernel.TOPK_SOFTMAX).buf(0, logits).buf(1, r.ids()).buf(2, r.weights())
                .params(3, new TopkParams(x.rows(), c.numExperts(), r.k())).runThreads(x.rows());
    }

    @Override
    protected void runMoe(MetalWeights w, int layer, BufferTensor<Buf> x, BufferRouting<Buf> r, BufferTensor<Buf> out) {
        ModelConfig c = w.config();
        DeviceWeights.Layer<Buf, Dense, Experts> l = w.tensors.layer(layer);
        int T = x.rows(), k = r.k(), H = c.hiddenSize(), I = c.intermediateSize(), E = c.numExperts();
        Buf act = scratch.ensure("MoE activations", 4L * T * k * I);
        MoeParams p = new MoeParams(T, k, H, I, E, c.swigluLimit());
        if (T >= prefillMinT) {
            moePrefill(l, x, r, act, out, p);
            return;
        }
        new Dispatch(MetalKernel.MOE_GATE_UP).buf(0, l.gate().codes()).buf(1, l.gate().scales()).buf(2, l.up().codes())
                .buf(3, l.up().scales()).buf(4, l.gateBias()).buf(5, l.upBias()).buf(6, x.buffer()).buf(7, r.ids()).buf(8, act)
                .params(9, p).runSimdgroups((long) T * k * I);
        new Dispatch(MetalKernel.MOE_DOWN).buf(0, l.down().codes()).buf(1, l.down().scales()).buf(2, l.downBias())
                .buf(3, act).buf(4, r.ids()).buf(5, r.weights()).buf(6, out.buffer())
                .params(7, p).runSimdgroups((long) T * H);
    }

    /** Prefill MoE: group the (token, slot) pairs by expert on the device, then tiled MXFP4 matmuls. */
    private void moePrefill(DeviceWeights.Layer<Buf, Dense, Experts> l, BufferTensor<Buf> x, BufferRouting<Buf> r, Buf act,
                            BufferTensor<Buf> out, MoeParams p) {
        int H = p.H(), I = p.I(), E = p.E(), n = p.T() * p.k();
        Buf group = scratch.ensure("MoE expert groups", 4L * (2L * E + n + 8L * E));
        long pairsOffset = 8L * E;
        Buf y = scratch.ensure("MoE expert outputs", 4L * n * H);
        new Dispatch(MetalKernel.MOE_SORT).buf(0, r.ids()).buf(1, group).buf(2, group, pairsOffset).params(3, new GroupParams(n, E)).runThreads(E);
        long pairTiles = (n + 7) / 8 + E; // segments are padded to 8 pairs: at most this many tiles
        new Dispatch(MetalKernel.MOE_GATE_UP_TILED).buf(0, l.gate().codes()).buf(1, l.gate().scales()).buf(2, l.up().codes())
                .buf(3, l.up().scales()).buf(4, l.gateBias()).buf(5, l.upBias()).buf(6, x.buffer()).buf(7, group)
                .buf(8, group, pairsOffset).buf(9, act).params(10, p).run(pairTiles * ((I + 31) / 32));
        new Dispatch(MetalKernel.MOE_DOWN_TILED).buf(0, l.down().codes()).buf(1, l.down().scales()).buf(2, l.downBias())
                .buf(3, act).buf(4, group).buf(5, group, pairsOffset).buf(6, y).params(7, p).run(pairTiles * ((H + 31) / 32));
        new Dispatch(MetalKernel.MOE_COMBINE).buf(0, y).buf(1, r.ids()).buf(2, r.weights()).buf(3, out.buffer())
                .params(4, p).runThreads((long) p.T() * H);
    }

    @Override
    protected void runAdd(BufferTensor<Buf> a, BufferTensor<Buf> b, BufferTensor<Buf> out) {
        int n = out.rows() * out.cols();
        new Dispatch(MetalKernel.ADD).buf(0, a.buffer()).buf(1, b.buffer()).buf(2, out.buffer()).params(3, new AddParams(n)).runThreads(n);
    }

    @Override
    protected void runLogits(MetalWeights w, BufferTensor<Buf> x, int fromRow, int n, Buf out) {
        matvec(w.tensors.unembedding(), null, x.buffer(), 4L * fromRow * x.cols(), n, out);
    }

    @Override
    protected void runArgmax(Buf logits, int n, int vocab, Buf ids) {
        new Dispatch(MetalKernel.ARGMAX).buf(0, logits).buf(1, ids).params(2, new ArgmaxParams(vocab)).run(n);
    }

    /** goss.metal has no sampling kernels yet: SAMPLE is declined and the host samples the logits. */
    @Override
    public boolean supports(BackendOp op) {
        return op != BackendOp.SAMPLE && super.supports(op);
    }

    @Override
    protected void closeDevice() {
        metal.close();
        for (Kernel k : kernels.values()) goss_mtl_pipeline_release(k.pipeline());
        kernels.clear();
        goss_mtl_library_release(lib);
        goss_mtl_queue_release(queue);
        goss_mtl_device_release(dev);
        arena.close();
    }
}
