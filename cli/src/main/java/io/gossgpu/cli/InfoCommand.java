package io.gossgpu.cli;

import io.gossgpu.api.EngineOptions;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.ExpertPlacement;
import io.gossgpu.placement.PlacementPlanner;
import io.gossgpu.backend.Backends;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.DType;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.tokenizer.GgufVocabCheck;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.TensorData;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/** {@code goss-gpu info}: loads a model and prints its format, config and a tensor summary. */
@Command(name = "info", header = "Describe a model: format, config and tensors.",
        description = "Load a model (original/ folder, Hugging Face folder or .gguf) and describe it.")
final class InfoCommand implements Runnable {
    @Mixin
    HelpOption help;

    @Option(names = {"-m", "--model"}, description = "Model folder or .gguf file (default: GOSS_MODEL or the usual download places).")
    Path model;

    @Option(names = "--no-mmap", description = "Read the files into memory instead of mapping them.")
    boolean noMmap;

    @Option(names = "--check-tensors", description = "Scan every weight for NaN, infinity and invalid MXFP4 scales (reads the whole model once).")
    boolean checkTensors;

    @Option(names = "--tensors", description = "List every tensor.")
    boolean listTensors;

    @Option(names = {"-c", "--context"}, defaultValue = "4096", description = "Context length to price the KV cache for (default: ${DEFAULT-VALUE}).")
    int context;

    @Option(names = "--swa-rollback", defaultValue = "" + KvCacheSpec.DEFAULT_SWA_ROLLBACK, paramLabel = "N",
            description = "Rollback slack of the sliding-window layers to price in, as chats use it (default: ${DEFAULT-VALUE}; 0: window only).")
    int swaRollback;

    @Option(names = {"-b", "--backend"}, defaultValue = "${env:GOSS_BACKEND:-auto}",
            description = "The backend to plan the MoE experts' placement on (default: ${DEFAULT-VALUE}); a GPU's plan and memory are printed.")
    String backend;

    @Mixin
    PlacementOptions placementOptions = new PlacementOptions();

    @Option(names = "--backends", description = "Only list the backends, whether each is available here, and their knobs: each value in effect on this device, where it comes from and the range the device allows.")
    boolean backendsOnly;

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
        String[] names = {"F32", "F16", "Q4_0", "Q4_1", "Q4_1_F16", "Q4_2", "Q4_3", "Q8_0", "Q5_0", "Q5_1", "Q2_K", "Q3_K_S", "Q3_K_M",
                "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "IQ2_XXS", "IQ2_XS", "Q2_K_S", "IQ3_XS", "IQ3_XXS", "IQ1_S",
                "IQ4_NL", "IQ3_S", "IQ3_M", "IQ2_S", "IQ2_M", "IQ4_XS", "IQ1_M", "BF16", "Q4_0_4_4", "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",
                "TQ2_0", "MXFP4_MOE"};
        int t = n.intValue();
        if (ckpt.format() == io.gossgpu.model.ModelFormat.OLLAMA && t == 4) return "; file type MXFP4";
        return t >= 0 && t < names.length ? "; file type " + names[t] : "; file type " + t;
    }

    @Override
    public void run() {
        PrintStream out = System.out;
        if (backendsOnly) {
            out.println("backends   " + Backends.summary());
            for (var p : Backends.providers()) { // what each available one runs on (cuda: the driver and the PTX it loads)
                var a = Backends.safeAvailability(p);
                if (a.available()) out.println("  " + p.name() + ": " + a.reason());
            }
            BackendOptions settings = BackendOptions.fromEnvironment();
            for (var p : Backends.providers()) { // the backends that offer a choice of device (opencl)
                List<String> devices = p.deviceListing(settings);
                if (devices.isEmpty()) continue;
                out.println(p.name() + " devices (* = selected" + p.deviceSetting().map(s -> "; --device or " + s).orElse("") + "):");
                devices.forEach(line -> out.println("  " + line));
            }
            for (var p : Backends.providers()) {
                if (p.knobs().isEmpty()) continue;
                boolean here = Backends.safeAvailability(p).available();
                out.println(p.name() + " knobs" + (here ? " in effect on this device" : " as declared (the backend is unavailable here)")
                        + " (environment, or -Dgoss." + p.name() + ".<kernel>.<knob>; 'goss-gpu tune --backend " + p.name() + "' measures them):");
                p.knobStates(settings).forEach(k -> out.println("  " + k.describe()));
            }
            return;
        }
        Path path = ModelLocator.require(model);
        long t0 = System.nanoTime();
        try (Checkpoint ckpt = Checkpoint.open(path, new LoadOptions(!noMmap, ProgressBar.forStderr(), checkTensors))) {
            ModelWeights weights = ModelWeights.of(ckpt); // validates names and shapes against the config, converting what the backends cannot run
            long ms = (System.nanoTime() - t0) / 1_000_000;
            ModelConfig c = ckpt.config();
            out.printf("model      %s%n", ckpt.path());
            out.printf("format     %s (%s, opened in %d ms)%n", describe(ckpt), noMmap ? "loaded into memory" : "memory-mapped", ms);
            out.printf("layers     %d (sliding window %d on even layers)%n", c.numHiddenLayers(), c.slidingWindow());
            out.printf("hidden     %d, intermediate %d, vocab %d%n", c.hiddenSize(), c.intermediateSize(), c.vocabSize());
            out.printf("attention  %d query heads, %d KV heads, head dim %d%n", c.numAttentionHeads(), c.numKeyValueHeads(), c.headDim());
            out.printf("experts    %d, %d per token, swiglu limit %s%n", c.numExperts(), c.expertsPerToken(), c.swigluLimit());
            out.printf("rope       theta %s, YaRN factor %s over %d (ntk alpha %s, beta %s), rms eps %s%n", c.ropeTheta(),
                    c.ropeScalingFactor(), c.initialContextLength(), c.ropeNtkAlpha(), c.ropeNtkBeta(), c.rmsNormEps());
            Map<DType, long[]> byType = new EnumMap<>(DType.class);
            for (TensorData t : ckpt.tensors().values()) {
                long[] acc = byType.computeIfAbsent(t.dtype(), k -> new long[3]);
                acc[0]++;
                acc[1] += t.elements();
                acc[2] += t.bytes().byteSize();
            }
            long weightBytes = ckpt.tensors().values().stream().mapToLong(t -> t.bytes().byteSize()).sum();
            out.printf("memory     weights %s as stored; %s (float32)%n", KvCacheSpec.humanBytes(weightBytes),
                    new KvCacheSpec(c, context, swaRollback).describe());
            out.printf("backends   %s%n", Backends.summary());
            GgufVocabCheck.describe(ckpt.metadata()).ifPresent(line -> out.printf("vocabulary %s%n", line));
            out.printf("tensors    %d, as stored%n", ckpt.tensors().size());
            byType.forEach((k, v) -> out.printf("  %-12s %6d tensors %,16d elements %,16d bytes%n", k, v[0], v[1], v[2]));
            List<String> converted = ckpt.conversions().summary();
            if (!converted.isEmpty()) out.printf("converted  at load, into types every backend runs:%n");
            converted.forEach(line -> out.printf("  %s%n", line));
            if (listTensors) for (TensorData t : ckpt.tensors().values()) out.printf("  %s%n", t);
            printPlacement(out, weights);
        }
    }

    /**
     * Where {@code --backend} would run the experts ({@code --cpu-moe}, {@code --n-cpu-moe}, or {@code auto} for a KV cache
     * of {@code --context}) and the memory on each side, before anything is loaded; a plan that cannot fit is the error.
     */
    private void printPlacement(PrintStream out, ModelWeights weights) {
        ExpertPlacement request = placementOptions.placement(context);
        try (Backend b = Backends.open(backend, BackendOptions.fromEnvironment())) {
            var plan = PlacementPlanner.memoryPlan(b, weights, request, EngineOptions.DEFAULT_PREFILL_CHUNK);
            if (plan.isEmpty())
                out.printf("placement  everything on %s (%s); --cpu-moe and --n-cpu-moe place experts beside a GPU backend%n", b.name(), b.deviceDescription());
            else
                plan.get().describe().forEach(out::println);
        }
    }
}
