package io.gossgpu.model.gguf;

import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.CheckpointReader;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelFormat;
import io.gossgpu.model.ModelLocation;
import java.util.Set;

/** GGUF files, llama.cpp's and Ollama's ({@link GgufReader}), for {@link Checkpoint#open}. */
public final class GgufCheckpointReader implements CheckpointReader {
    @Override
    public Set<ModelFormat> formats() {
        return Set.of(ModelFormat.GGUF, ModelFormat.OLLAMA);
    }

    @Override
    public Checkpoint open(ModelLocation at, LoadOptions options) {
        return GgufReader.open(at.path(), options);
    }
}
