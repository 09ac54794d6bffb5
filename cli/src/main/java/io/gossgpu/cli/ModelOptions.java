package io.gossgpu.cli;

import io.gossgpu.GossException;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Backends;
import io.gossgpu.backend.ExpertPlacement;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The options every command that loads a model shares. */
final class ModelOptions {
    @Option(
            names = {"-m", "--model"},
            description =
                    "The model: an original/ or Hugging Face folder, a .gguf file, a download folder "
                            + "holding one, or ollama:NAME:TAG (a model Ollama pulled, e.g. ollama:gpt-oss:20b). Default: GOSS_MODEL, ~/models/gpt-oss-20b, ~/models/gpt-oss-120b, the Hugging Face cache; with none "
                            + "there, chat, serve and verify use the built-in demo model (a tiny model trained by this project, not gpt-oss) and bench a random-weight model of its shape.")
    Path model;

    @Option(
            names = {"-b", "--backend"},
            defaultValue = "${env:GOSS_BACKEND:-auto}",
            description = "auto | metal | cuda | opencl | cpu | reference (default: ${DEFAULT-VALUE}).")
    String backend;

    @Option(names = "--no-mmap", description = "Read model files into memory instead of mapping them.")
    boolean noMmap;

    @Option(
            names = "--check-tensors",
            description =
                    "Scan every weight for NaN, infinity and invalid MXFP4 scales at load (reads the whole model once).")
    boolean checkTensors;

    @Option(
            names = "--float-experts",
            description = "Keep MoE experts stored as floats (BF16 fine-tunes) as floats instead of quantizing them "
                    + "to MXFP4 at load: about 4 times the memory; the cpu and reference backends only.")
    boolean floatExperts;

    @Option(
            names = {"-t", "--threads"},
            description = "Threads of the cpu backend (default: GOSS_CPU_THREADS or all cores).")
    Integer threads;

    @Option(
            names = "--device",
            description =
                    "GPU to use: an index or part of its name (see 'goss-gpu info --backends'). OpenCL only for now.")
    String device;

    @picocli.CommandLine.Mixin
    PlacementOptions placementOptions = new PlacementOptions();

    @picocli.CommandLine.Mixin
    KvTypeOption kvTypeOption = new KvTypeOption();

    /** Where a GPU runs each layer's experts, {@code auto} leaving room for a KV cache of {@code kvTokens} positions. */
    ExpertPlacement placement(int kvTokens) {
        return placementOptions.placement(kvTokens);
    }

    /**
     * The backend settings: the environment's and system properties' ({@link BackendOptions#fromEnvironment()}, read
     * here once), then {@code --device} and {@code --threads}, which win.
     */
    BackendOptions backendOptions() {
        BackendOptions o = BackendOptions.fromEnvironment();
        if (threads != null && threads <= 0) throw new GossException("--threads must be positive, got " + threads);
        for (var p : Backends.providers()) { // the setting of each backend that has one (GOSS_OPENCL_DEVICE,
            // GOSS_CPU_THREADS)
            if (device != null && p.deviceSetting().isPresent())
                o = o.with(p.deviceSetting().get(), device, "--device");
            if (threads != null && p.threadsSetting().isPresent())
                o = o.with(p.threadsSetting().get(), threads.toString(), "--threads");
        }
        return o;
    }

    /** How to open {@code model} as these options say, {@code auto} placement leaving room for {@code kvTokens} KV positions. */
    EngineOptions engineOptions(Path model, int kvTokens) {
        return kvTypeOption
                .applyTo(EngineOptions.of(model))
                .withPlacement(placement(kvTokens))
                .withBackend(backend)
                .withMmap(!noMmap)
                .withProgress(ProgressBar.forEngine())
                .withCheckTensors(checkTensors)
                .withFloatExperts(floatExperts)
                .withBackendOptions(backendOptions());
    }
}
