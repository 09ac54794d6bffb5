package io.gossgpu.cli;

import io.gossgpu.api.EngineOptions;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Backends;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.tools.ModelDescription;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code goss-gpu info}: loads a model and prints its format, config and a tensor summary. */
@Command(
        name = "info",
        header = "Describe a model: format, config and tensors.",
        description = "Load a model (original/ folder, Hugging Face folder or .gguf) and describe it.")
final class InfoCommand implements Runnable {
    @Mixin
    HelpOption help;

    @Option(
            names = {"-m", "--model"},
            description = "Model folder or .gguf file (default: GOSS_MODEL or the usual download places).")
    Path model;

    @Option(names = "--no-mmap", description = "Read the files into memory instead of mapping them.")
    boolean noMmap;

    @Option(
            names = "--check-tensors",
            description = "Scan every weight for NaN, infinity and invalid MXFP4 scales (reads the whole model once).")
    boolean checkTensors;

    @Option(names = "--tensors", description = "List every tensor.")
    boolean listTensors;

    @Option(
            names = {"-c", "--context"},
            defaultValue = "4096",
            description = "Context length to price the KV cache for (default: ${DEFAULT-VALUE}).")
    int context;

    @Option(
            names = "--swa-rollback",
            defaultValue = "" + KvCacheSpec.DEFAULT_SWA_ROLLBACK,
            paramLabel = "N",
            description =
                    "Rollback slack of the sliding-window layers to price in, as chats use it (default: ${DEFAULT-VALUE}; 0: window only).")
    int swaRollback;

    @Option(
            names = {"-b", "--backend"},
            defaultValue = "${env:GOSS_BACKEND:-auto}",
            description =
                    "The backend to plan the MoE experts' placement on (default: ${DEFAULT-VALUE}); a GPU's plan and memory are printed.")
    String backend;

    @Mixin
    PlacementOptions placementOptions = new PlacementOptions();

    @Mixin
    KvTypeOption kvTypeOption = new KvTypeOption();

    @Option(
            names = "--backends",
            description =
                    "Only list the backends, whether each is available here, and their knobs: each value in effect on this device, where it comes from and the range the device allows.")
    boolean backendsOnly;

    @Override
    public void run() {
        PrintStream out = System.out;
        if (backendsOnly) {
            out.println("backends   " + Backends.summary());
            for (var p :
                    Backends.providers()) { // what each available one runs on (cuda: the driver and the PTX it loads)
                var a = Backends.safeAvailability(p);
                if (a.available()) out.println("  " + p.name() + ": " + a.reason());
            }
            BackendOptions settings = BackendOptions.fromEnvironment();
            for (var p : Backends.providers()) { // the backends that offer a choice of device (opencl)
                List<String> devices = p.deviceListing(settings);
                if (devices.isEmpty()) continue;
                out.println(p.name() + " devices (* = selected"
                        + p.deviceSetting().map(s -> "; --device or " + s).orElse("") + "):");
                devices.forEach(line -> out.println("  " + line));
            }
            for (var p : Backends.providers()) {
                if (p.knobs().isEmpty()) continue;
                boolean here = Backends.safeAvailability(p).available();
                out.println(p.name() + " knobs"
                        + (here ? " in effect on this device" : " as declared (the backend is unavailable here)")
                        + " (environment, or -Dgoss." + p.name() + ".<kernel>.<knob>; 'goss-gpu tune --backend "
                        + p.name() + "' measures them):");
                p.knobStates(settings).forEach(k -> out.println("  " + k.describe()));
            }
            return;
        }
        Path path = ModelLocator.require(model);
        EngineOptions options = kvTypeOption
                .applyTo(EngineOptions.of(path))
                .withBackend(backend)
                .withMmap(!noMmap)
                .withCheckTensors(checkTensors)
                .withProgress(ProgressBar.forEngine())
                .withPlacement(placementOptions.placement(context));
        ModelDescription.print(options, context, swaRollback, listTensors, out::println);
    }
}
