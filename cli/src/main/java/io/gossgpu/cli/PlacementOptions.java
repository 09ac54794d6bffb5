package io.gossgpu.cli;

import io.gossgpu.backend.ExpertPlacement;
import picocli.CommandLine.Option;

/** {@code --cpu-moe} and {@code --n-cpu-moe N}: where a GPU backend runs each layer's MoE experts ({@link ExpertPlacement}). */
final class PlacementOptions {
    @Option(
            names = "--cpu-moe",
            description = "With a GPU backend: run the MoE experts of every layer on the CPU (from host memory), "
                    + "everything else on the GPU.")
    boolean cpuMoe;

    @Option(
            names = "--n-cpu-moe",
            paramLabel = "N",
            description =
                    "With a GPU backend: run the MoE experts of the first N layers on the CPU, "
                            + "the rest of the model on the GPU (0: none). Default: all on the GPU when it holds the whole model, else as few layers' as make it fit.")
    Integer nCpuMoe;

    @Option(
            names = "--stream-experts-min-t",
            paramLabel = "N",
            description =
                    "With experts on the CPU: a prefill step of at "
                            + "least N tokens uploads each such layer's experts to the GPU (one layer at a time, in one scratch set the plan "
                            + "counts) and runs them there instead; decode keeps them on the CPU. Default 0: never (not yet measured faster).")
    int streamExpertsMinT;

    /** The request, {@code auto} leaving room for a KV cache of {@code kvTokens} positions. */
    ExpertPlacement placement(int kvTokens) {
        return ExpertPlacement.fromFlags(cpuMoe, nCpuMoe, kvTokens).withStreamMinTokens(streamExpertsMinT);
    }
}
