package io.gossgpu.cli;

import io.gossgpu.tools.Benchmark;
import io.gossgpu.tools.TestModel;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code goss-gpu tune}: sweeps one backend's launch knobs on this device and prints the best as export lines. */
@Command(
        name = "tune",
        header = "Find the fastest launch knob values on this device.",
        sortOptions = false,
        description =
                "Time each knob of one backend (GOSS_<BACKEND>_<KERNEL>_<KNOB>: launch sizes; the cpu backend's GOSS_CPU_THREADS and GOSS_CPU_KERNELS) over the values this device allows, starting from the value in effect, one knob at a time with the ones before at their best, and print a table per knob; then time the best setting against the one in effect in alternating rounds and print its export lines only when it wins beyond noise (each round faster, at least 5% on average, the 95% confidence interval of the ratio above 1.0). The load average is printed at the start and the end. Without --model it tunes on a generated model of gpt-oss-20b's widths (2 layers, 32 experts, 32768-token vocabulary; written once to the goss-gpu cache folder).")
final class TuneCommand implements Runnable {
    @Mixin
    HelpOption help;

    /** The generated model tune uses without --model: gpt-oss-20b's layer widths, so the kernels see real shapes. */
    static final String MODEL_DIR = "tune-model-v1";

    @Mixin
    ModelOptions modelOptions;

    @Option(
            names = "--knob",
            paramLabel = "NAME",
            description = "A knob to sweep (ATTENTION_WG or GOSS_OPENCL_ATTENTION_WG); repeatable. Default: all.")
    List<String> knobs = List.of();

    @Option(
            names = "--prompt-tokens",
            description = "Prompt tokens of the prefill run; 0 skips it (default: 128, --quick 16).")
    Integer promptTokens;

    @Option(names = "--tokens", description = "Decoded tokens of the decode run; 0 skips it (default: 32, --quick 4).")
    Integer tokens;

    @Option(
            names = {"-r", "--repetitions"},
            description = "Timed runs per value after one warm-up; the median counts (default: 3, --quick 1).")
    Integer reps;

    @Option(
            names = "--quick",
            description = "Only the value in effect and its neighbours (3 values per knob) and short runs.")
    boolean quick;

    @Option(
            names = "--rounds",
            description =
                    "Rounds of the final check, in which the values in effect and the tuned ones take turns; the tuned "
                            + "values are exported only when they win it beyond noise (default: 5, --quick 3; at least 3).")
    Integer rounds;

    @Override
    public void run() {
        Benchmark.checkTuning(
                modelOptions.backend, knobs); // a bad backend or knob name fails before a model is written
        Path model;
        if (modelOptions.model != null) {
            model = ModelLocator.require(modelOptions.model);
        } else {
            model = DemoModel.generated(
                    DemoModel.cacheDir().resolve(MODEL_DIR),
                    new TestModel(TestModel.Preset.gpt_oss_20b, 7, 2, 32, 32768),
                    "the tuning model");
        }
        System.err.println("goss-gpu tune: timing on " + model
                + (modelOptions.model == null ? " (random weights, gpt-oss-20b widths)" : ""));
        System.out.print(Benchmark.tune(
                modelOptions.backend,
                modelOptions.backendOptions(),
                model,
                knobs,
                promptTokens != null ? promptTokens : quick ? 16 : 128,
                tokens != null ? tokens : quick ? 4 : 32,
                reps != null ? reps : quick ? 1 : 3,
                quick,
                rounds != null ? rounds : quick ? 3 : 5,
                System.err));
    }
}
