package io.gossgpu.model.safetensors;

import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.CheckpointReader;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelFormat;
import io.gossgpu.model.ModelLocation;
import java.util.Set;

/** OpenAI's original/ folder and the Hugging Face layout ({@link SafetensorsReader}), for {@link Checkpoint#open}. */
public final class SafetensorsCheckpointReader implements CheckpointReader {
    @Override
    public Set<ModelFormat> formats() {
        return Set.of(ModelFormat.ORIGINAL, ModelFormat.HF);
    }

    @Override
    public Checkpoint open(ModelLocation at, LoadOptions options) {
        return switch (at.format()) {
            case ORIGINAL -> SafetensorsReader.openOriginal(at.path(), options);
            case HF -> SafetensorsReader.openHf(at.path(), options);
            default -> throw new IllegalArgumentException(at.format() + " is not a safetensors layout");
        };
    }
}
