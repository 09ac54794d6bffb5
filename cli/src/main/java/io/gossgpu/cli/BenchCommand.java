package io.gossgpu.cli;

import io.gossgpu.api.EngineOptions;
import io.gossgpu.backend.ExpertPlacement;
import io.gossgpu.tools.Benchmark;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code goss-gpu bench}: prefill and decode throughput in llama-bench's style. */
@Command(
        name = "bench",
        header = "Measure prefill and decode speed, llama-bench style.",
        sortOptions = false,
        description =
                "Measure prefill (pp) and decode (tg) tokens per second, llama-bench style, with the bytes a decoded token reads "
                        + "and the GB/s achieved. On the cpu backend it measures the machine's read bandwidth first and gives decode as a "
                        + "percentage of it. Prints the CPU's flags, then a markdown table (or JSON with -o json).")
final class BenchCommand implements Runnable {
    @Mixin
    HelpOption help;

    @Mixin
    ModelOptions modelOptions;

    @Option(
            names = {"-p", "--n-prompt"},
            split = ",",
            paramLabel = "N",
            defaultValue = "512",
            description = "Prompt tokens of the prefill tests, a comma list; 0 skips them (default: ${DEFAULT-VALUE}).")
    List<Integer> pp;

    @Option(
            names = {"-n", "--n-gen"},
            split = ",",
            paramLabel = "N",
            defaultValue = "128",
            description = "Tokens of the decode tests, a comma list; 0 skips them (default: ${DEFAULT-VALUE}).")
    List<Integer> tg;

    @Option(
            names = {"-d", "--n-depth"},
            split = ",",
            paramLabel = "DEPTH",
            defaultValue = "0",
            description =
                    "Tokens already in the KV cache when each test starts, a comma list: -d 0,8192 runs every test at both "
                            + "(default: ${DEFAULT-VALUE}).")
    List<Integer> depths;

    @Option(
            names = {"-r", "--repetitions"},
            defaultValue = "3",
            description = "Timed runs of each test after one warm-up (default: ${DEFAULT-VALUE}).")
    int reps;

    @Option(
            names = {"-w", "--warmup"},
            defaultValue = "1",
            description =
                    "Untimed runs of each test before the timed ones, for the JIT (default: ${DEFAULT-VALUE}, as llama-bench).")
    int warmups;

    @Option(
            names = "--bandwidth",
            paramLabel = "GB/s",
            defaultValue = "0",
            description =
                    "Memory bandwidth to compare decode with, instead of measuring it (the cpu backend measures it by default).")
    double bandwidth;

    @Option(
            names = "--no-bandwidth-probe",
            description = "Do not measure the read bandwidth (it takes a second and 1 GiB of memory).")
    boolean noProbe;

    @Option(
            names = {"-np", "--parallel"},
            split = ",",
            paramLabel = "N",
            description =
                    "Also run each decode test as N streams at once, a comma list (1,2,4,8): N sessions decoding side by side, "
                            + "batched into shared steps as the server's slots are; gives their aggregate t/s and its ratio to 1 stream (default: none).")
    List<Integer> parallel = List.of();

    @Option(
            names = "--op-times",
            description =
                    "Also print where each test's time goes, op kind by op kind (summed over the layers), "
                            + "with each op's bytes and GB/s for decode: a profile of the step. On the cpu backend the decode profile is one more "
                            + "run with a C probe pass between tokens, each op set against the probes around it. On a GPU each op is waited for before it is timed.")
    boolean opTimes;

    @Option(
            names = {"-o", "--output"},
            paramLabel = "md|json",
            defaultValue = "md",
            description = "md (default) or json.")
    Format output;

    enum Format {
        md,
        json
    }

    @Override
    public void run() {
        Path model = modelOptions.model != null ? ModelLocator.require(modelOptions.model) : null;
        if (modelOptions.model == null)
            System.err.println("goss-gpu: no --model given: benchmarking the in-memory random-weight demo model");
        Benchmark.Report r = Benchmark.run(engineOptions(model), settings(), System.err);
        System.out.print(output == Format.json ? r.json() : r.markdown());
    }

    /** How to open {@code model} (null: the in-memory demo), the experts placed for the default KV cache as a plan starts. */
    EngineOptions engineOptions(Path model) {
        return modelOptions.engineOptions(model, ExpertPlacement.DEFAULT_KV_TOKENS);
    }

    Benchmark.Settings settings() {
        return new Benchmark.Settings(pp, tg, depths, reps, warmups, bandwidth, !noProbe, parallel, opTimes);
    }
}
