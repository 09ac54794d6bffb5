package io.gossgpu.device;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Backends;
import io.gossgpu.backend.DeviceMemoryException;
import io.gossgpu.backend.ExpertPlacement;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Turns an {@link ExpertPlacement} into an {@link ExpertPlan} for one GPU and one model, weighing the device's free
 * memory against what the GPU would hold ({@link DeviceBackend#deviceBytes} of the GPU's part, so each backend's own
 * layout is counted), and wraps the GPU backend in a {@link SplitBackend} when the plan puts any experts on the CPU.
 */
public final class PlacementPlanner {
    private PlacementPlanner() {}

    /**
     * Device memory {@code auto} keeps free beyond the weights and the KV cache: the activations of a prefill chunk
     * (the ops' scratch: rows of the hidden state, q/k/v, the router's logits, the MoE's per-expert rows) and
     * {@link #SLACK} for what a driver keeps for itself.
     */
    static long scratchBytes(ModelConfig c, int prefillChunk) {
        long perRow = 6L * c.hiddenSize()
                + 2L * c.qDim()
                + 2L * c.kvDim()
                + c.numExperts()
                + 3L * c.expertsPerToken() * c.intermediateSize()
                + c.expertsPerToken() * (long) c.hiddenSize();
        return 4L * perRow * prefillChunk + 4L * c.vocabSize() + SLACK;
    }

    static final long SLACK = 64L << 20;

    /**
     * The plan and the memory on each side.
     *
     * @param device         the GPU, as its driver names it
     * @param freeBytes      its free memory when planned
     * @param restBytes      the GPU's weights with no experts at all (attention, router, norms, embeddings)
     * @param expertBytes    per layer, the GPU bytes of that layer's experts
     * @param kvBytes        the KV cache {@code auto} leaves room for ({@link ExpertPlacement#kvTokens})
     * @param scratchBytes   activations and slack {@code auto} leaves room for, and with streaming on the largest
     *                       layer's experts ({@link #streamBytes})
     * @param cpuExpertBytes per layer, the host bytes of that layer's experts as the file stores them
     */
    public record MemoryPlan(
            ExpertPlacement request,
            ExpertPlan plan,
            String device,
            long freeBytes,
            long restBytes,
            long[] expertBytes,
            long kvBytes,
            int kvTokens,
            long scratchBytes,
            long[] cpuExpertBytes) {
        /** Bytes of the GPU's weights under {@link #plan}. */
        public long gpuWeightBytes() {
            long b = restBytes;
            for (int l = 0; l < expertBytes.length; l++) if (!plan.onCpu(l)) b += expertBytes[l];
            return b;
        }

        /** Host bytes of the experts the CPU runs. */
        public long cpuBytes() {
            long b = 0;
            for (int l = 0; l < cpuExpertBytes.length; l++) if (plan.onCpu(l)) b += cpuExpertBytes[l];
            return b;
        }

        /** Lines for {@code info}: the plan, then each side's memory. */
        public List<String> describe() {
            List<String> out = new ArrayList<>();
            out.add("placement  " + request.describe() + ": " + plan.describe());
            out.add("GPU memory " + h(gpuWeightBytes()) + " of weights (" + h(restBytes) + " without experts + "
                    + (plan.layers() - plan.cpuLayers()) + " layers' experts) + " + h(kvBytes) + " KV cache for "
                    + kvTokens
                    + " positions + " + h(scratchBytes) + " scratch; " + device + " has " + h(freeBytes) + " free");
            out.add("CPU memory " + h(cpuBytes()) + " of experts (" + plan.cpuLayers()
                    + " layers), run by the cpu backend");
            return out;
        }
    }

    private static String h(long b) {
        return KvCacheSpec.humanBytes(Math.max(0, b));
    }

    /**
     * The plan {@code request} makes on {@code gpu} for {@code m}. {@code auto} keeps every expert on the GPU when the
     * whole model, the KV cache and scratch fit, else puts the first layers' experts on the CPU until the rest fits.
     * Throws a {@link DeviceMemoryException} naming what does not fit: with {@code auto} when even no experts on the GPU
     * leave too little for the rest of the model and the KV cache; with a fixed request when its GPU weights alone do
     * not fit (the KV cache is checked when it is made).
     */
    public static MemoryPlan plan(DeviceBackend<?, ?> gpu, ModelWeights m, ExpertPlacement request, int prefillChunk) {
        ModelConfig c = m.config();
        int layers = m.layers().size();
        long free = gpu.freeBytes();
        long rest = gpu.deviceBytes(SplitModel.gpuPart(m, ExpertPlan.allOnCpu(layers)));
        long[] experts = new long[layers], host = new long[layers];
        for (int l = 0; l < layers; l++) {
            int[] others = new int[layers - 1];
            for (int i = 0, j = 0; i < layers; i++) if (i != l) others[j++] = i;
            experts[l] = gpu.deviceBytes(SplitModel.gpuPart(m, ExpertPlan.layersOnCpu(layers, others))) - rest;
            host[l] = hostBytes(m.layers().get(l));
        }
        int tokens = request.kvTokens();
        long kv = request.kvBytes(c), scratch = scratchBytes(c, prefillChunk) + streamBytes(request, experts);
        String device = gpu.deviceName();
        ExpertPlan plan;
        if (request.mode() == ExpertPlacement.Mode.AUTO) {
            long left = free - rest - kv - scratch;
            if (left < 0)
                throw new DeviceMemoryException(
                        "even with every layer's experts on the CPU, the rest of the model (" + h(rest)
                                + ") and a KV cache for " + tokens + " positions (" + h(kv) + ") with " + h(scratch)
                                + " scratch need "
                                + h(rest + kv + scratch) + " on " + device + ", which has " + h(free)
                                + " free; choose a shorter context or another backend");
            plan = ExpertPlan.firstOnCpu(layers, cpuLayersFor(left, experts));
        } else {
            plan = ExpertPlan.fixed(request, layers);
            MemoryPlan p = new MemoryPlan(request, plan, device, free, rest, experts, kv, tokens, scratch, host);
            long stream = streamBytes(request, experts);
            if (p.gpuWeightBytes() + stream > free)
                throw new DeviceMemoryException(request.describe() + ": the GPU's weights (" + h(rest)
                        + " without experts + "
                        + h(p.gpuWeightBytes() - rest) + " of experts of " + (layers - plan.cpuLayers()) + " layers"
                        + (stream > 0 ? " + " + h(stream) + " to stream one layer's experts" : "") + ") need "
                        + h(p.gpuWeightBytes() + stream) + " on " + device + ", which has " + h(free)
                        + " free; put more layers' experts on the CPU");
        }
        return new MemoryPlan(request, plan, device, free, rest, experts, kv, tokens, scratch, host);
    }

    /**
     * How many of the first layers' experts go to the CPU so that the GPU's share of the experts fits in {@code left}
     * bytes ({@code experts[l]}: layer {@code l}'s): the fewest, keeping the last layers' on the GPU (llama.cpp's
     * {@code --n-cpu-moe} counts from the first layer too).
     */
    static int cpuLayersFor(long left, long[] experts) {
        int n = experts.length;
        long gpuExperts = 0;
        while (n > 0 && gpuExperts + experts[n - 1] <= left) gpuExperts += experts[--n];
        return n;
    }

    /**
     * The GPU scratch weight set streaming needs ({@link ExpertPlacement#streamMinTokens}): room for the largest layer's
     * experts, one layer at a time; 0 when streaming is off.
     */
    static long streamBytes(ExpertPlacement request, long[] experts) {
        if (request.streamMinTokens() == 0) return 0;
        long max = 0;
        for (long e : experts) max = Math.max(max, e);
        return max;
    }

    /** Host bytes of a layer's experts and their biases as the file stores them. */
    static long hostBytes(LayerWeights w) {
        long b = 0;
        for (WeightView v : new WeightView[] {w.gate(), w.up(), w.down(), w.gateBias(), w.upBias(), w.downBias()}) {
            long rows = (long) v.experts() * v.rows();
            b += rows * v.rowBytes() + (v.format() == WeightFormat.MXFP4_OPENAI ? rows * (v.cols() / 32) : 0);
        }
        return b;
    }

    /**
     * {@code backend} as {@code request} places the experts of {@code m}: unchanged when it is not a GPU
     * ({@link DeviceBackend}) or the plan keeps every expert on it, else a {@link SplitBackend} over it and a cpu backend
     * from {@code cpu} (made only then). On a failure {@code backend} is left to the caller to close.
     */
    public static Backend place(
            Backend backend, ModelWeights m, ExpertPlacement request, int prefillChunk, Supplier<Backend> cpu) {
        return memoryPlan(backend, m, request, prefillChunk)
                .map(p -> p.plan().splits()
                        ? (Backend) new SplitBackend(backend, cpu.get(), p.plan(), request.streamMinTokens())
                        : backend)
                .orElse(backend);
    }

    /**
     * The plan {@code request} makes for {@code m} on {@code backend} when it is a GPU ({@link #plan}); empty on the cpu
     * and reference backends, which hold everything in host memory. A bad {@code --n-cpu-moe} fails on every backend.
     */
    public static java.util.Optional<MemoryPlan> memoryPlan(
            Backend backend, ModelWeights m, ExpertPlacement request, int prefillChunk) {
        request.checkLayers(m.layers().size());
        if (!(backend instanceof DeviceBackend<?, ?> gpu)) return java.util.Optional.empty();
        return java.util.Optional.of(plan(gpu, m, request, prefillChunk));
    }

    /**
     * Opens backend {@code name} ({@link Backends#open}) with the experts of {@code m} placed as {@code request} says, the
     * cpu backend (when the plan splits) created with the same {@code options}. Closes what it opened when it fails.
     */
    public static Backend open(
            String name, BackendOptions options, ModelWeights m, ExpertPlacement request, int prefillChunk) {
        Backend b = Backends.open(name, options);
        try {
            return place(b, m, request, prefillChunk, () -> Backends.open("cpu", options));
        } catch (RuntimeException | Error e) {
            b.close();
            throw e;
        }
    }
}
