package io.gossgpu.model.gguf;

import io.gossgpu.GossException;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;

import java.nio.file.Path;

/** Placeholder until the GGUF reader lands (issue 2, in progress in this session). */
public final class GgufReader {
    private GgufReader() {}

    public static boolean hasMagic(Path file) {
        return false;
    }

    public static Checkpoint open(Path file, LoadOptions options) {
        throw new GossException(file + ": GGUF reading is not built yet");
    }
}
