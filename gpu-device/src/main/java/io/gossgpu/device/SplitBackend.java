package io.gossgpu.device;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOp;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.ForwardingBackend;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.backend.Routing;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightView;
import java.util.HashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.IntFunction;

/**
 * A GPU backend with the MoE experts of some layers on the cpu backend ({@link ExpertPlan}): the GPU runs every op
 * except {@link #moe} of the CPU's layers, where this reads {@code x} and the routing back from the GPU, runs the cpu
 * backend's MoE on its own copy of those layers' experts and writes the result into the GPU's {@code out}: one crossing
 * each way per offloaded layer and step. The GPU uploads no experts of the CPU's layers and the cpu backend holds
 * nothing else ({@link SplitModel}).
 *
 * <p>On a device-layer GPU ({@link DeviceBackend}) the crossing is a {@link HostCrossing}: the copies go through the
 * device's host staging (pinned on CUDA), out with one wait and back without one, and a backend that defers a step's
 * work keeps deferring across it: CUDA runs a decode step as one graph per GPU segment (the work between two crossings),
 * Metal one command buffer per segment. Any other GPU (a test's cpu backend in its place) crosses by plain reads and
 * writes.
 *
 * <p>Streaming ({@code streamMinTokens > 0}): a step of at least that many tokens (a long prompt's prefill chunk) runs
 * a CPU layer's MoE on the GPU instead, after uploading that layer's experts through the GPU's own weight loading into
 * one scratch weight set held by the loaded weights ({@link StreamSlot}): one layer at a time, the previous layer's
 * freed before the next is uploaded, so the GPU holds at most one CPU layer's experts (the planner counts it). Decode
 * steps (fewer tokens) keep the CPU's experts.
 */
public final class SplitBackend extends ForwardingBackend {
    private final Backend cpu;
    private final IntFunction<ExpertPlan> planFor;
    /** The cpu backend's input, routing and output for a batch of each size seen (prefill chunks, decode). */
    private final Map<Integer, Buffers> buffers = new HashMap<>();
    /** The GPU's side of each crossing when it is a device-layer GPU, else null (plain reads and writes). */
    private final HostCrossing<?> crossing;
    /** Steps of at least this many tokens stream a CPU layer's experts to the GPU; 0: never. */
    private final int streamMinTokens;

    private long offloaded, streamed;
    /** Inside a decode step (one token per sequence, however many sequences): it never streams. */
    private boolean decodeStep;

    private record Buffers(DeviceTensor x, DeviceRouting routing, DeviceTensor out) {}

    /**
     * @param gpu  runs everything but the CPU layers' experts; owned (closed with this)
     * @param cpu  runs the CPU layers' experts; owned
     */
    public SplitBackend(Backend gpu, Backend cpu, ExpertPlan plan) {
        this(gpu, cpu, plan, 0);
    }

    /** As above, streaming a CPU layer's experts to the GPU for steps of at least {@code streamMinTokens} tokens (0: never). */
    public SplitBackend(Backend gpu, Backend cpu, ExpertPlan plan, int streamMinTokens) {
        this(
                gpu,
                cpu,
                layers -> {
                    if (layers != plan.layers())
                        throw new io.gossgpu.GossException(
                                "the placement plan is for " + plan.layers() + " layers, the model has " + layers);
                    return plan;
                },
                streamMinTokens);
    }

    /** With the plan for each model it loads made from its layer count (tests load models of several shapes). */
    public SplitBackend(Backend gpu, Backend cpu, IntFunction<ExpertPlan> planFor) {
        this(gpu, cpu, planFor, 0);
    }

    /** With the plan made from the layer count, streaming for steps of at least {@code streamMinTokens} tokens (0: never). */
    public SplitBackend(Backend gpu, Backend cpu, IntFunction<ExpertPlan> planFor, int streamMinTokens) {
        super(gpu);
        if (streamMinTokens < 0) throw new IllegalArgumentException("streamMinTokens " + streamMinTokens);
        this.cpu = cpu;
        this.planFor = planFor;
        this.streamMinTokens = streamMinTokens;
        this.crossing = gpu instanceof DeviceBackend<?, ?> d ? HostCrossing.of(d) : null;
    }

    /** The backend that runs the CPU layers' experts. */
    public Backend cpuBackend() {
        return cpu;
    }

    /** The plan {@code w} (weights this backend loaded) was split by. */
    public static ExpertPlan plan(LoadedWeights w) {
        return ((SplitWeights) w).plan();
    }

    /**
     * The GPU's scratch weight set for streaming: the experts of one CPU layer ({@link SplitModel#expertsOf}), uploaded
     * from {@code host} when a long step needs them, replaced by the next layer's.
     */
    static final class StreamSlot implements AutoCloseable {
        private final ModelWeights host;
        private LoadedWeights weights;
        private int layer = -1;

        StreamSlot(ModelWeights host) {
            this.host = host;
        }

        /** {@code gpu}'s weights holding layer {@code l}'s experts, uploaded unless they are the ones it holds. */
        LoadedWeights of(Backend gpu, int l) {
            if (layer == l) return weights;
            close(); // the previous layer's first: at most one layer's experts on the GPU
            weights = gpu.loadWeights(SplitModel.expertsOf(host, l));
            layer = l;
            return weights;
        }

        @Override
        public void close() {
            if (weights != null) weights.close();
            weights = null;
            layer = -1;
        }
    }

    /** The two backends' weights: the GPU's part and the CPU's ({@link SplitModel}), split by {@code plan}. */
    record SplitWeights(LoadedWeights gpu, LoadedWeights cpu, ExpertPlan plan, StreamSlot stream)
            implements LoadedWeights {
        @Override
        public ModelConfig config() {
            return gpu.config();
        }

        @Override
        public long rowBytes(WeightView v) {
            return gpu.rowBytes(v);
        }

        @Override
        public void close() {
            try {
                try {
                    stream.close();
                } finally {
                    gpu.close();
                }
            } finally {
                cpu.close();
            }
        }
    }

    private static LoadedWeights gpu(LoadedWeights w) {
        return w instanceof SplitWeights s ? s.gpu() : w;
    }

    @Override
    public LoadedWeights loadWeights(ModelWeights weights) {
        ExpertPlan plan = planFor.apply(weights.layers().size());
        LoadedWeights g = delegate.loadWeights(SplitModel.gpuPart(weights, plan));
        try {
            return new SplitWeights(
                    g, cpu.loadWeights(SplitModel.cpuPart(weights, plan)), plan, new StreamSlot(weights));
        } catch (RuntimeException | Error e) {
            g.close();
            throw e;
        }
    }

    @Override
    public void moe(LoadedWeights w, int layer, DeviceTensor x, DeviceRouting routing, DeviceTensor out) {
        if (!(w instanceof SplitWeights s) || !s.plan().onCpu(layer)) {
            delegate.moe(gpu(w), layer, x, routing, out);
            return;
        }
        if (streamMinTokens > 0 && !decodeStep && x.rows() >= streamMinTokens) {
            delegate.moe(s.stream().of(delegate, layer), layer, x, routing, out);
            streamed++;
            return;
        }
        Buffers b = buffers(x.rows(), x.cols(), routing.k());
        float[] in;
        Routing r;
        if (crossing != null) {
            in = new float[x.rows() * x.cols()];
            r = crossing.toHost(x, routing, in);
        } else {
            in = delegate.read(x);
            r = delegate.readRouting(routing);
        }
        cpu.write(b.x(), in);
        cpu.writeRouting(b.routing(), r);
        cpu.moe(s.cpu(), layer, b.x(), b.routing(), b.out());
        float[] result = cpu.read(b.out());
        if (crossing != null) crossing.fromHost(result, out);
        else delegate.write(out, result);
        offloaded++;
    }

    private Buffers buffers(int rows, int cols, int k) {
        Buffers b = buffers.get(rows);
        if (b != null && b.x().cols() == cols && b.routing().k() == k) return b;
        if (b != null || buffers.size() >= 16) releaseBuffers(); // many prefill lengths: keep the memory bounded
        b = new Buffers(cpu.allocate(rows, cols), cpu.allocateRouting(rows, k), cpu.allocate(rows, cols));
        buffers.put(rows, b);
        return b;
    }

    @Override
    public void beginStep(Batch batch) {
        decodeStep = batch.rows() == batch.size();
        delegate.beginStep(batch);
    }

    @Override
    public void endStep() {
        decodeStep = false;
        delegate.endStep();
    }

    // ---- every other op: the GPU, on its part of the weights -------------------------------------

    @Override
    public void embed(LoadedWeights w, int[] tokens, DeviceTensor out) {
        delegate.embed(gpu(w), tokens, out);
    }

    @Override
    public void rmsNorm(LoadedWeights w, int layer, NormKind which, DeviceTensor x, DeviceTensor out) {
        delegate.rmsNorm(gpu(w), layer, which, x, out);
    }

    @Override
    public void dense(LoadedWeights w, int layer, DenseKind which, DeviceTensor x, DeviceTensor out) {
        delegate.dense(gpu(w), layer, which, x, out);
    }

    @Override
    public void qkvRope(
            LoadedWeights w, int layer, DeviceTensor x, Batch batch, DeviceTensor q, DeviceTensor k, DeviceTensor v) {
        delegate.qkvRope(gpu(w), layer, x, batch, q, k, v);
    }

    @Override
    public void attention(
            LoadedWeights w, int layer, DeviceTensor q, DeviceTensor k, DeviceTensor v, Batch batch, DeviceTensor out) {
        delegate.attention(gpu(w), layer, q, k, v, batch, out);
    }

    @Override
    public void router(LoadedWeights w, int layer, DeviceTensor x, DeviceRouting out) {
        delegate.router(gpu(w), layer, x, out);
    }

    @Override
    public float[] logits(LoadedWeights w, DeviceTensor x, int fromRow) {
        return delegate.logits(gpu(w), x, fromRow);
    }

    @Override
    public int[] argmax(LoadedWeights w, DeviceTensor x, int fromRow) {
        return delegate.argmax(gpu(w), x, fromRow);
    }

    @Override
    public int[] sample(LoadedWeights w, DeviceTensor x, int fromRow, double[] temperatures, double[] draws) {
        return delegate.sample(gpu(w), x, fromRow, temperatures, draws);
    }

    @Override
    public void addRmsNorm(
            LoadedWeights w,
            int layer,
            NormKind which,
            DeviceTensor x,
            DeviceTensor y,
            DeviceTensor sum,
            DeviceTensor out) {
        delegate.addRmsNorm(gpu(w), layer, which, x, y, sum, out);
    }

    /** What the GPU runs itself (its sampling, a fused op): a split changes only where the experts run. */
    @Override
    public boolean supports(BackendOp op) {
        return delegate.supports(op);
    }

    @Override
    public String deviceDescription() {
        return delegate.deviceDescription() + "; MoE experts of some layers on the " + cpu.deviceDescription();
    }

    /**
     * The GPU's counters, {@code split_cpu_moe}: MoE calls of CPU layers run on the CPU, and {@code split_streamed_moe}:
     * those run on the GPU with the layer's experts streamed there.
     */
    @Override
    public SortedMap<String, Long> counters() {
        SortedMap<String, Long> c = new TreeMap<>(delegate.counters());
        c.put("split_cpu_moe", offloaded);
        c.put("split_streamed_moe", streamed);
        return c;
    }

    private void releaseBuffers() {
        for (Buffers b : buffers.values()) {
            b.x().close();
            b.routing().close();
            b.out().close();
        }
        buffers.clear();
    }

    @Override
    public void close() {
        try {
            try {
                releaseBuffers();
                if (crossing != null) crossing.close(); // its host staging before the GPU's context goes
            } finally {
                delegate.close();
            }
        } finally {
            cpu.close();
        }
    }
}
