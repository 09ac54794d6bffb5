package io.gossgpu.api;

import io.gossgpu.model.ModelLocation;
import java.nio.file.Files;
import java.nio.file.Path;

/** The model a path given by a user names, for applications that take one (the command line's {@code --model}). */
public final class ModelPath {
    private ModelPath() {}

    /**
     * {@code given} itself when it exists; {@code ollama:NAME:TAG} (no such file) is the manifest of the model Ollama
     * pulled into {@code ollamaModels}, which {@link Engine#open} follows to its GGUF; else a one-line
     * {@link io.gossgpu.GossException}: not found, or a symbolic link that dangles or loops, said as such.
     */
    public static Path resolve(Path given, Path ollamaModels) {
        if (given.toString().startsWith(ModelLocation.OLLAMA_PREFIX) && !Files.exists(given))
            return ModelLocation.ollamaManifest(given.toString(), ollamaModels);
        if (!Files.exists(given)) throw ModelLocation.notFound(given);
        return given;
    }
}
