package io.gossgpu.cli;

import io.gossgpu.GossException;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.backend.ExpertPlacement;
import io.gossgpu.tools.BackendCheck;
import java.nio.file.Path;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code goss-gpu verify}: runs a backend beside the reference op by op and names the first divergence. */
@Command(
        name = "verify",
        header = "Compare a backend with the reference (op by op, or KL).",
        description = {
            "Run a backend and the reference side by side, op by op, and report the first op, layer and position where they differ.",
            "The first line says which arithmetic is checked. The cpu backend's native kernels (int8 activations, float dense weights "
                    + "quantized to Q8_0 at load) are compared with the reference on those same Q8_0 weights, within the int8 "
                    + "tolerance; GOSS_CPU_DENSE=float or GOSS_CPU_KERNELS=java check other paths.",
            "With --kl, measure instead how closely the backend's next-token distributions follow the reference's on the "
                    + "file's weights, as llama-perplexity --kl-divergence does: mean and 99th-percentile KL divergence "
                    + "KL(reference || backend) over the full vocabulary's softmax, top-1 agreement and RMS logit error, over "
                    + "conversations (default: the demo model's held-out set, each scored over its assistant turn) or a text."
        })
final class VerifyCommand implements java.util.concurrent.Callable<Integer> {
    @Mixin
    HelpOption help;

    @Mixin
    ModelOptions modelOptions;

    @Option(names = "--tokens", description = "Token ids (default: 24 random ids, seeded).")
    String tokens;

    @Option(
            names = "--tolerance",
            description =
                    "Allowed difference relative to each row's largest value (default: the one the backend's "
                            + "arithmetic is stated to hold: 1e-4 for float32 backends, 1e-1 for the cpu backend's int8 kernels).")
    Double tolerance;

    @Option(
            names = "--kl",
            description =
                    "Measure output quality against the reference (KL divergence, top-1 agreement, RMS logit error) instead of comparing op by op.")
    boolean kl;

    @Option(
            names = "--conversations",
            paramLabel = "FILE",
            description =
                    "With --kl: JSON lines, each a conversation ending with an assistant "
                            + "turn ({\"messages\": [...]}, as render reads) or a held-out item with \"references\" (default: the demo model's held-out conversations).")
    Path conversations;

    @Option(
            names = "--text",
            paramLabel = "FILE",
            description =
                    "With --kl: a UTF-8 text, cut into chunks of --chunk tokens, each scored over its second half.")
    Path text;

    @Option(
            names = "--chunk",
            defaultValue = "512",
            description = "With --text: tokens per chunk (default: ${DEFAULT-VALUE}).")
    int chunk;

    @Option(
            names = "--limit",
            description =
                    "With --kl: score at most this many conversations (spread evenly over the set) or chunks (default: all).")
    Integer limit;

    @Override
    public Integer call() {
        if (!kl && (conversations != null || text != null || limit != null))
            throw new GossException("--conversations, --text and --limit go with --kl");
        if (kl && (tokens != null || tolerance != null))
            throw new GossException("--tokens and --tolerance compare op by op: they do not go with --kl");
        if (conversations != null && text != null) throw new GossException("give --conversations or --text, not both");
        if (limit != null && limit < 1) throw new GossException("--limit must be at least 1, got " + limit);
        EngineOptions options =
                modelOptions.engineOptions(DemoModel.resolve(modelOptions.model), ExpertPlacement.DEFAULT_KV_TOKENS);
        if (kl) {
            BackendCheck.measureKl(
                    options,
                    text,
                    conversations,
                    chunk,
                    limit != null ? limit : Integer.MAX_VALUE,
                    System.out::println);
            return 0;
        }
        return BackendCheck.verifyOps(
                        options,
                        tokens != null ? vocab -> TokenIds.parse(tokens, vocab) : null,
                        tolerance,
                        System.out::println)
                ? 0
                : 1;
    }
}
