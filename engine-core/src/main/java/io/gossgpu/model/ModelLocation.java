package io.gossgpu.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.gossgpu.GossException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds the model inside what a user points at, as the usual downloads lay it out:
 * <ul>
 *   <li>OpenAI's {@code huggingface-cli download openai/gpt-oss-20b --include "original/*"}: a folder whose
 *       {@code original/} subfolder holds the model;</li>
 *   <li>a Hugging Face (transformers) folder, with or without {@code original/} beside it (read in its
 *       transformers layout);</li>
 *   <li>the Hugging Face cache's {@code models--openai--gpt-oss-20b} folder (its {@code refs/main} snapshot);</li>
 *   <li>a {@code .gguf} file, a folder holding one (LM Studio), or a split GGUF ({@code -00001-of-0000N.gguf},
 *       any shard or its folder);</li>
 *   <li>Ollama's models folder or one of its manifests, which name the GGUF blob.</li>
 * </ul>
 */
public record ModelLocation(Path path, ModelFormat format) {

    /** The model at or under {@code path}, or a one-line error saying what is there instead. */
    public static ModelLocation find(Path path) {
        if (!Files.exists(path)) throw notFound(path);
        if (Files.isDirectory(path)) return inFolder(path);
        if (!Files.isRegularFile(path))
            throw new GossException(
                    path
                            + ": not a regular file or folder (a pipe or a device?); point --model at a model folder or a .gguf file");
        if (!Files.isReadable(path)) throw new GossException(path + ": cannot be read (permission denied)");
        if (FormatProbes.isGguf(path)) return new ModelLocation(GgufSplit.firstShard(path), ModelFormat.GGUF);
        Path blob = OllamaManifest.blob(path);
        if (blob != null) return find(blob);
        throw new GossException(path + ": not a GGUF file (no GGUF magic) and not a model folder");
    }

    private static ModelLocation inFolder(Path dir) {
        boolean hasConfig = Files.isRegularFile(dir.resolve("config.json"));
        if (hasConfig && FormatProbes.isOriginalFolder(dir)) return new ModelLocation(dir, ModelFormat.ORIGINAL);
        if (hasConfig
                && (Files.isRegularFile(dir.resolve("model.safetensors.index.json"))
                        || FormatProbes.isHfConfig(dir.resolve("config.json"))))
            return new ModelLocation(dir, ModelFormat.HF);
        if (hasConfig && Files.isRegularFile(dir.resolve("model.safetensors")))
            return new ModelLocation(dir, ModelFormat.ORIGINAL);
        List<Path> ggufs = GgufSplit.models(ggufFiles(dir));
        if (Files.isDirectory(dir.resolve("original"))) {
            // Two models side by side: picking one silently could run a different model than the user meant.
            if (!ggufs.isEmpty())
                throw new GossException(dir + ": holds two models, " + dir.resolve("original") + " and "
                        + ggufs.getFirst() + (ggufs.size() > 1 ? " (and " + (ggufs.size() - 1) + " more GGUF)" : "")
                        + "; point --model at the one to run");
            return find(dir.resolve("original"));
        }
        Path snapshot = hfCacheSnapshot(dir);
        if (snapshot != null) return find(snapshot);
        Path ollama = OllamaManifest.inModelsFolder(dir);
        if (ollama != null) return find(ollama);
        if (ggufs.size() == 1) return find(ggufs.getFirst());
        if (ggufs.size() > 1)
            throw new GossException(dir + ": holds " + ggufs.size() + " GGUF models; point --model at one of them: "
                    + String.join(
                            ", ",
                            ggufs.stream().map(p -> p.getFileName().toString()).toList()));
        throw new GossException(
                dir
                        + ": no model here (expected config.json with model*.safetensors, an original/ folder, or a .gguf file)");
    }

    /**
     * The error for a path that does not resolve: missing, or a symbolic link that dangles or loops (which
     * {@link Files#exists} also calls missing), said as such.
     */
    public static GossException notFound(Path path) {
        if (!Files.isSymbolicLink(path)) return new GossException("model not found: " + path);
        List<Path> chain = new ArrayList<>();
        Path p = path.toAbsolutePath().normalize();
        try {
            while (Files.isSymbolicLink(p)) {
                if (chain.contains(p) || chain.size() > 40) {
                    chain.add(p);
                    return new GossException(path + ": a symbolic link loop ("
                            + String.join(
                                    " -> ", chain.stream().map(Path::toString).toList())
                            + "); point --model at the model itself");
                }
                chain.add(p);
                Path target = Files.readSymbolicLink(p);
                p = p.resolveSibling(target).normalize();
            }
        } catch (IOException e) {
            return new GossException(path + ": cannot read the symbolic link " + p + " (" + e.getMessage() + ")");
        }
        if (Files.exists(
                p)) // the chain ends at something that exists, yet the path does not resolve: a loop among its folders
        return new GossException(path + ": does not resolve (a symbolic link loop in a folder above it?)");
        return new GossException(path + ": a symbolic link to " + p + ", which does not exist");
    }

    /** The Hugging Face cache's repository folder: the snapshot refs/main names, else its only snapshot. */
    private static Path hfCacheSnapshot(Path dir) {
        Path snapshots = dir.resolve("snapshots");
        if (!Files.isDirectory(snapshots)) return null;
        try {
            Path ref = dir.resolve("refs").resolve("main");
            if (Files.isRegularFile(ref)) {
                Path named = snapshots.resolve(Files.readString(ref).strip());
                if (Files.isDirectory(named)) return named;
            }
            List<Path> all = new ArrayList<>();
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(snapshots, Files::isDirectory)) {
                ds.forEach(all::add);
            }
            if (all.size() == 1) return all.getFirst();
            if (all.isEmpty())
                throw new GossException(
                        dir + ": a Hugging Face cache folder with no snapshot (was the download interrupted?)");
            throw new GossException(dir + ": a Hugging Face cache folder with " + all.size()
                    + " snapshots and no refs/main; point --model at one of " + snapshots);
        } catch (IOException e) {
            throw new GossException(dir + ": cannot read the Hugging Face cache folder (" + e.getMessage() + ")");
        }
    }

    private static List<Path> ggufFiles(Path dir) {
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.gguf")) {
            for (Path p : ds) if (Files.isRegularFile(p)) files.add(p);
        } catch (IOException e) {
            throw new GossException(dir + ": cannot list the folder (" + e.getMessage() + ")");
        }
        files.sort(null);
        return files;
    }

    /** The prefix of an Ollama model name given as a model path: {@code ollama:gpt-oss:20b}. */
    public static final String OLLAMA_PREFIX = "ollama:";

    /**
     * The manifest of the Ollama model {@code name} ({@code gpt-oss:20b}, {@code gpt-oss} for its {@code latest} tag,
     * or {@code user/model:tag}, {@code host/namespace/model:tag}) in the Ollama models folder {@code models}, which
     * {@link #find} then follows to the GGUF blob; a one-line error when Ollama has not pulled it.
     */
    public static Path ollamaManifest(String name, Path models) {
        String n = name.startsWith(OLLAMA_PREFIX) ? name.substring(OLLAMA_PREFIX.length()) : name;
        int colon = n.lastIndexOf(':');
        String model = colon > n.lastIndexOf('/') ? n.substring(0, colon) : n,
                tag = colon > n.lastIndexOf('/') ? n.substring(colon + 1) : "latest";
        if (model.isEmpty() || tag.isEmpty() || model.contains("..") || tag.contains("/"))
            throw new GossException(
                    "'" + name + "' is not an Ollama model name (expected ollama:MODEL:TAG, e.g. ollama:gpt-oss:20b)");
        String[] parts = model.split("/");
        Path manifests = models.resolve("manifests");
        Path path = switch (parts.length) {
            case 1 -> manifests.resolve("registry.ollama.ai").resolve("library").resolve(parts[0]);
            case 2 -> manifests.resolve("registry.ollama.ai").resolve(parts[0]).resolve(parts[1]);
            default -> manifests.resolve(model);
        };
        Path manifest = path.resolve(tag);
        if (!Files.isRegularFile(manifest))
            throw new GossException("Ollama has no model " + model + ":" + tag + " in " + models + " (no " + manifest
                    + "; run 'ollama pull " + model + ":" + tag + "', or set OLLAMA_MODELS to Ollama's models folder)");
        return manifest;
    }

    /**
     * Ollama keeps models as content-addressed blobs: {@code manifests/registry.ollama.ai/library/gpt-oss/20b} is
     * JSON whose layer of media type {@code application/vnd.ollama.image.model} names {@code blobs/sha256-…}.
     */
    static final class OllamaManifest {
        static final String MODEL_MEDIA_TYPE = "application/vnd.ollama.image.model";

        private OllamaManifest() {}

        /** The GGUF blob a manifest file names, or null when {@code file} is not an Ollama manifest. */
        static Path blob(Path file) {
            JsonNode m;
            try {
                if (Files.size(file) > 1 << 20) return null;
                m = Json.readObjectFile(file);
            } catch (IOException | RuntimeException e) {
                return null;
            }
            JsonNode layers = m.get("layers");
            if (layers == null || !layers.isArray()) return null;
            for (JsonNode l : layers) {
                JsonNode type = l.get("mediaType"), digest = l.get("digest");
                if (type == null || !MODEL_MEDIA_TYPE.equals(type.asText()) || digest == null) continue;
                Path models = modelsFolderOf(file);
                if (models == null)
                    throw new GossException(
                            file + ": an Ollama manifest outside an Ollama models folder (no blobs/ above it)");
                Path blob = models.resolve("blobs").resolve(digest.asText().replace(':', '-'));
                if (!Files.isRegularFile(blob))
                    throw new GossException(file + ": names the model blob " + blob + ", which is missing");
                return blob;
            }
            return null;
        }

        /** The gpt-oss manifest of an Ollama models folder ({@code ~/.ollama/models}), or null when {@code dir} is none. */
        static Path inModelsFolder(Path dir) {
            Path library = dir.resolve("manifests")
                    .resolve("registry.ollama.ai")
                    .resolve("library")
                    .resolve("gpt-oss");
            if (!Files.isDirectory(dir.resolve("blobs")) || !Files.isDirectory(dir.resolve("manifests"))) return null;
            List<Path> tags = new ArrayList<>();
            if (Files.isDirectory(library)) {
                try (DirectoryStream<Path> ds = Files.newDirectoryStream(library, Files::isRegularFile)) {
                    ds.forEach(tags::add);
                } catch (IOException e) {
                    throw new GossException(library + ": cannot list the folder (" + e.getMessage() + ")");
                }
            }
            tags.sort(null);
            if (tags.size() == 1) return tags.getFirst();
            if (tags.isEmpty())
                throw new GossException(
                        dir + ": an Ollama models folder without gpt-oss (run 'ollama pull gpt-oss:20b')");
            throw new GossException(dir
                    + ": an Ollama models folder with several gpt-oss models; point --model at one of "
                    + String.join(", ", tags.stream().map(Path::toString).toList()));
        }

        private static Path modelsFolderOf(Path manifest) {
            for (Path p = manifest.toAbsolutePath().getParent(); p != null; p = p.getParent())
                if (Files.isDirectory(p.resolve("blobs")) && Files.isDirectory(p.resolve("manifests"))) return p;
            return null;
        }
    }
}
