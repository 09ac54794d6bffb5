package io.gossgpu.cli;

import io.gossgpu.bench.Bench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code goss-gpu bench}: prefill and decode throughput in llama-bench's style. */
@Command(name = "bench", header = "Measure prefill and decode speed, llama-bench style.", sortOptions = false,
        description = "Measure prefill (pp) and decode (tg) tokens per second, llama-bench style, with the bytes a decoded token reads and the GB/s achieved. Prints a markdown table.")
final class BenchCommand implements Runnable {
    @Mixin
    HelpOption help;

    @Mixin
    ModelOptions modelOptions;

    @Option(names = {"-p", "--n-prompt"}, defaultValue = "512", description = "Prompt tokens of the prefill test; 0 skips it (default: ${DEFAULT-VALUE}).")
    int pp;

    @Option(names = {"-n", "--n-gen"}, defaultValue = "128", description = "Tokens of the decode test; 0 skips it (default: ${DEFAULT-VALUE}).")
    int tg;

    @Option(names = {"-r", "--repetitions"}, defaultValue = "3", description = "Timed runs of each test after one warm-up (default: ${DEFAULT-VALUE}).")
    int reps;

    @Option(names = "--bandwidth", defaultValue = "0", description = "Measured memory bandwidth in GB/s, to report the fraction of the ceiling.")
    double bandwidth;

    @Override
    public void run() {
        String model = modelOptions.model != null ? ModelLocator.require(modelOptions.model).toString() : "demo";
        if (modelOptions.model == null) System.err.println("goss-gpu: no --model given: benchmarking the in-memory random-weight demo model");
        Bench.Report r = Bench.run(new Bench.Options(model, modelOptions.backend, modelOptions.backendOptions(), pp, tg, reps, bandwidth), System.err);
        System.out.print(r.markdown());
    }
}
