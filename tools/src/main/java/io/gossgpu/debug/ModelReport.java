package io.gossgpu.debug;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Backends;
import io.gossgpu.backend.ExpertPlacement;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.KvType;
import io.gossgpu.device.PlacementPlanner;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.DType;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelFormat;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.TensorData;
import io.gossgpu.tokenizer.GgufVocabCheck;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * What {@code goss-gpu info} prints about a model (through {@link io.gossgpu.tools.ModelDescription}): its format and
 * config, the memory of its weights and of a KV cache, its tensors, and where a backend would place the MoE experts.
 */
public final class ModelReport {
    private ModelReport() {}

    /**
     * Opens {@code model} as {@code load} says, validates it as loading does, and gives {@code out} the report line by
     * line; the placement (on {@code backend}, made with {@code backendOptions}) comes last, so a plan that cannot fit is
     * the error after the rest is out.
     */
    public static void print(
            Path model,
            LoadOptions load,
            String backend,
            BackendOptions backendOptions,
            ExpertPlacement request,
            int prefillChunk,
            int context,
            int swaRollback,
            boolean listTensors,
            Consumer<String> out) {
        long t0 = System.nanoTime();
        try (Checkpoint ckpt = Checkpoint.open(model, load)) {
            ModelWeights weights = ModelWeights.of(
                    ckpt); // validates names and shapes against the config, converting what the backends cannot run
            long ms = (System.nanoTime() - t0) / 1_000_000;
            ModelConfig c = ckpt.config();
            out.accept(String.format("model      %s", ckpt.path()));
            out.accept(String.format(
                    "format     %s (%s, opened in %d ms)",
                    describe(ckpt), load.mmap() ? "memory-mapped" : "loaded into memory", ms));
            out.accept(String.format(
                    "layers     %d (sliding window %d on even layers)", c.numHiddenLayers(), c.slidingWindow()));
            out.accept(String.format(
                    "hidden     %d, intermediate %d, vocab %d", c.hiddenSize(), c.intermediateSize(), c.vocabSize()));
            out.accept(String.format(
                    "attention  %d query heads, %d KV heads, head dim %d",
                    c.numAttentionHeads(), c.numKeyValueHeads(), c.headDim()));
            out.accept(String.format(
                    "experts    %d, %d per token, swiglu limit %s",
                    c.numExperts(), c.expertsPerToken(), c.swigluLimit()));
            out.accept(String.format(
                    "rope       theta %s, YaRN factor %s over %d (ntk alpha %s, beta %s), rms eps %s",
                    c.ropeTheta(),
                    c.ropeScalingFactor(),
                    c.initialContextLength(),
                    c.ropeNtkAlpha(),
                    c.ropeNtkBeta(),
                    c.rmsNormEps()));
            Map<DType, long[]> byType = new EnumMap<>(DType.class);
            for (TensorData t : ckpt.tensors().values()) {
                long[] acc = byType.computeIfAbsent(t.dtype(), k -> new long[3]);
                acc[0]++;
                acc[1] += t.elements();
                acc[2] += t.bytes().byteSize();
            }
            long weightBytes = ckpt.tensors().values().stream()
                    .mapToLong(t -> t.bytes().byteSize())
                    .sum();
            KvCacheSpec kv = new KvCacheSpec(c, context, swaRollback, request.kvType());
            out.accept(String.format(
                    "memory     weights %s as stored; %s", KvCacheSpec.humanBytes(weightBytes), kv.describe()));
            out.accept("kv types   "
                    + Arrays.stream(KvType.values())
                            .map(t -> t.flagName() + " "
                                    + KvCacheSpec.humanBytes(kv.withType(t).bytes())
                                    + (t == kv.type() ? " (this one)" : ""))
                            .collect(Collectors.joining(", "))
                    + "; choose with --kv-type");
            out.accept(String.format("backends   %s", Backends.summary()));
            GgufVocabCheck.describe(ckpt.metadata())
                    .ifPresent(line -> out.accept(String.format("vocabulary %s", line)));
            out.accept(String.format("tensors    %d, as stored", ckpt.tensors().size()));
            byType.forEach((k, v) ->
                    out.accept(String.format("  %-12s %6d tensors %,16d elements %,16d bytes", k, v[0], v[1], v[2])));
            List<String> converted = ckpt.conversions().summary();
            if (!converted.isEmpty()) out.accept("converted  at load, into types every backend runs:");
            converted.forEach(line -> out.accept("  " + line));
            if (listTensors) for (TensorData t : ckpt.tensors().values()) out.accept("  " + t);
            placement(weights, backend, backendOptions, request, prefillChunk, out);
        }
    }

    /** Where {@code backend} would run the experts, and the memory on each side, before anything is loaded. */
    private static void placement(
            ModelWeights weights,
            String backend,
            BackendOptions backendOptions,
            ExpertPlacement request,
            int prefillChunk,
            Consumer<String> out) {
        try (Backend b = Backends.open(backend, backendOptions)) {
            var plan = PlacementPlanner.memoryPlan(b, weights, request, prefillChunk);
            if (plan.isEmpty())
                out.accept(String.format(
                        "placement  everything on %s (%s); --cpu-moe and --n-cpu-moe place experts beside a GPU backend",
                        b.name(), b.deviceDescription()));
            else plan.get().describe().forEach(out);
        }
    }

    /** The layout, and for a GGUF what wrote it: {@code GGUF (gpt-oss, llama.cpp's names; file type Q4_K_M)}. */
    private static String describe(Checkpoint ckpt) {
        return switch (ckpt.format()) {
            case GGUF -> "GGUF (llama.cpp's gpt-oss layout" + fileType(ckpt) + ")";
            case OLLAMA -> "OLLAMA (Ollama's own gptoss GGUF" + fileType(ckpt) + ")";
            case ORIGINAL -> "ORIGINAL (OpenAI's original/ checkpoint)";
            case HF -> "HF (Hugging Face transformers)";
        };
    }

    /** llama.cpp's {@code general.file_type} name, as llama-quantize sets it. */
    private static String fileType(Checkpoint ckpt) {
        if (!(ckpt.metadata().get("general.file_type") instanceof Number n)) return "";
        String[] names = {
            "F32",
            "F16",
            "Q4_0",
            "Q4_1",
            "Q4_1_F16",
            "Q4_2",
            "Q4_3",
            "Q8_0",
            "Q5_0",
            "Q5_1",
            "Q2_K",
            "Q3_K_S",
            "Q3_K_M",
            "Q3_K_L",
            "Q4_K_S",
            "Q4_K_M",
            "Q5_K_S",
            "Q5_K_M",
            "Q6_K",
            "IQ2_XXS",
            "IQ2_XS",
            "Q2_K_S",
            "IQ3_XS",
            "IQ3_XXS",
            "IQ1_S",
            "IQ4_NL",
            "IQ3_S",
            "IQ3_M",
            "IQ2_S",
            "IQ2_M",
            "IQ4_XS",
            "IQ1_M",
            "BF16",
            "Q4_0_4_4",
            "Q4_0_4_8",
            "Q4_0_8_8",
            "TQ1_0",
            "TQ2_0",
            "MXFP4_MOE"
        };
        int t = n.intValue();
        if (ckpt.format() == ModelFormat.OLLAMA && t == 4) return "; file type MXFP4";
        return t >= 0 && t < names.length ? "; file type " + names[t] : "; file type " + t;
    }
}
