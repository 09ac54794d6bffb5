package io.gossgpu.tools;

import io.gossgpu.api.EngineOptions;
import io.gossgpu.debug.ModelReport;
import java.util.function.Consumer;

/**
 * A developer facility: a model described without loading it on a backend, as {@code goss-gpu info} prints it.
 */
public final class ModelDescription {
    private ModelDescription() {}

    /**
     * Opens {@link EngineOptions#model()} (mapped or read, checking the tensors, with the progress the options say),
     * validates it as {@link Engine#open} does, and gives {@code out} the description line by line: format, config,
     * the weights' memory and that of a KV cache of {@code contextLength} positions (with {@code swaRollback} slack on
     * the sliding-window layers), the backends here, the vocabulary a GGUF carries, the tensors by type (each one with
     * {@code listTensors}), the conversions loading makes, and last where {@link EngineOptions#backend()} would place
     * the MoE experts as {@link EngineOptions#placement()} asks, with the memory on each side. Nothing is uploaded.
     *
     * @throws io.gossgpu.GossException in one line, when the model cannot be read or the placement cannot fit (the
     *                                  lines before it are out by then)
     */
    public static void print(
            EngineOptions options, int contextLength, int swaRollback, boolean listTensors, Consumer<String> out) {
        ModelReport.print(
                options.model(),
                Loading.of(options),
                options.backend(),
                options.backendOptions(),
                options.placement().withKvType(options.kvType()),
                options.prefillChunk(),
                contextLength,
                swaRollback,
                listTensors,
                out);
    }
}
