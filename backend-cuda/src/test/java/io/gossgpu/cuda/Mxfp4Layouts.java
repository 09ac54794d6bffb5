package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.testmodel.GgufWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import java.nio.file.Path;

/**
 * One model shape in both MXFP4 layouts: an OpenAI-layout checkpoint in memory and a GGUF file (block_mxfp4, repacked
 * to OpenAI's planes at upload), each from its own generator seed.
 */
final class Mxfp4Layouts implements AutoCloseable {
    final ModelWeights openai, ggml;
    private final Checkpoint openaiCheckpoint, ggufCheckpoint;

    Mxfp4Layouts(ModelConfig shape, long openaiSeed, long ggufSeed, Path dir) {
        openaiCheckpoint = new TestModelGenerator(shape, openaiSeed).inMemory();
        Path file = dir.resolve("model-" + ggufSeed + ".gguf");
        GgufWriter.write(new TestModelGenerator(shape, ggufSeed), file, GgufWriter.Options.defaults());
        ggufCheckpoint = Checkpoint.open(file, LoadOptions.defaults());
        openai = ModelWeights.of(openaiCheckpoint);
        ggml = ModelWeights.of(ggufCheckpoint);
        assertEquals(WeightFormat.MXFP4_OPENAI, openai.layers().get(0).gate().format());
        assertEquals(WeightFormat.MXFP4_GGML, ggml.layers().get(0).gate().format());
    }

    ModelWeights[] both() {
        return new ModelWeights[] {openai, ggml};
    }

    @Override
    public void close() {
        openaiCheckpoint.close();
        ggufCheckpoint.close();
    }
}
