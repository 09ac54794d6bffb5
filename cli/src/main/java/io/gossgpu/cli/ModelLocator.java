package io.gossgpu.cli;

import io.gossgpu.GossException;
import io.gossgpu.api.ModelPath;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Where to find a model when none is named: {@code GOSS_MODEL}, then the usual download places
 * (~/models/gpt-oss-20b, ~/models/gpt-oss-120b, the Hugging Face hub cache).
 */
final class ModelLocator {
    private ModelLocator() {}

    /** The places looked at, in order (for the "not found" message). */
    static List<Path> candidates() {
        List<Path> out = new ArrayList<>();
        String env = System.getenv("GOSS_MODEL");
        if (env != null && !env.isBlank()) out.add(Path.of(env));
        Path home = Path.of(System.getProperty("user.home"));
        for (String m : List.of("gpt-oss-20b", "gpt-oss-120b"))
            out.add(home.resolve("models").resolve(m));
        String hfHome = System.getenv("HF_HOME");
        Path hub = hfHome != null ? Path.of(hfHome, "hub") : home.resolve(".cache/huggingface/hub");
        for (String m : List.of("models--openai--gpt-oss-20b", "models--openai--gpt-oss-120b")) {
            Path snapshots = hub.resolve(m).resolve("snapshots");
            if (Files.isDirectory(snapshots)) {
                try (Stream<Path> s = Files.list(snapshots)) {
                    s.sorted().forEach(out::add);
                } catch (IOException e) {
                    // unreadable cache: skip it
                }
            } else {
                out.add(snapshots);
            }
        }
        return out;
    }

    /** The first existing default location, if any. */
    static Optional<Path> findDefault() {
        return candidates().stream().filter(Files::exists).findFirst();
    }

    /** Ollama's models folder: {@code OLLAMA_MODELS}, else {@code ~/.ollama/models}. */
    static Path ollamaModels() {
        String env = System.getenv("OLLAMA_MODELS");
        return env != null && !env.isBlank()
                ? Path.of(env)
                : Path.of(System.getProperty("user.home"), ".ollama", "models");
    }

    /**
     * {@code explicit} if given ({@code ollama:NAME:TAG} names the manifest of a model Ollama pulled), else the first
     * default, else an error saying where it looked.
     */
    static Path require(Path explicit) {
        if (explicit != null) return ModelPath.resolve(explicit, ollamaModels());
        return findDefault()
                .orElseThrow(() -> new GossException(
                        "no model given and none found; pass --model PATH or set GOSS_MODEL (looked in: "
                                + String.join(
                                        ", ",
                                        candidates().stream()
                                                .map(Path::toString)
                                                .toList()) + ")"));
    }
}
