package io.gossgpu.model.safetensors;

import com.fasterxml.jackson.databind.JsonNode;
import io.gossgpu.GossException;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.FileBytes;
import io.gossgpu.model.FormatProbes;
import io.gossgpu.model.Json;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelFormat;
import io.gossgpu.model.ModelFormatException;
import io.gossgpu.model.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * Opens gpt-oss checkpoints stored as safetensors: OpenAI's {@code original/} folder and the Hugging
 * Face transformers layout. Every file is mapped (or read, without mmap) into one shared arena that
 * the returned {@link Checkpoint} owns; tensors are views of it, never copies. Everything is checked
 * before it is trusted; any failure closes the arena and is one {@link ModelFormatException}.
 */
public final class SafetensorsReader {
    private SafetensorsReader() {}

    /**
     * OpenAI's original/ folder: config.json and model.safetensors, or shards listed by a
     * model.safetensors.index.json, or else every *.safetensors file of the folder (in name order).
     */
    public static Checkpoint openOriginal(Path dir, LoadOptions options) {
        Path configFile = dir.resolve("config.json");
        JsonNode configNode = Json.readObjectFile(configFile);
        ModelConfig config = ConfigJson.original(configFile, configNode);
        if (Files.isRegularFile(dir.resolve("model.safetensors")))
            return open(
                    dir,
                    ModelFormat.ORIGINAL,
                    config,
                    configNode,
                    List.of(dir.resolve("model.safetensors")),
                    null,
                    options);
        Path indexFile = dir.resolve(ShardIndex.FILE);
        if (Files.isRegularFile(indexFile))
            return openIndexed(dir, ModelFormat.ORIGINAL, config, configNode, indexFile, options);
        List<Path> files = FormatProbes.safetensorsFiles(dir);
        if (files.isEmpty())
            throw new ModelFormatException(dir, "no model.safetensors (or other *.safetensors file) here");
        return open(dir, ModelFormat.ORIGINAL, config, configNode, files, null, options);
    }

    private static Checkpoint openIndexed(
            Path dir,
            ModelFormat format,
            ModelConfig config,
            JsonNode configNode,
            Path indexFile,
            LoadOptions options) {
        Map<String, String> index = ShardIndex.read(indexFile);
        List<Path> files = new ArrayList<>();
        for (String s : new LinkedHashSet<>(index.values())) files.add(dir.resolve(s));
        return open(dir, format, config, configNode, files, new Index(indexFile, index), options);
    }

    /** The Hugging Face layout: config.json, model.safetensors.index.json and its shards, or one model.safetensors. */
    public static Checkpoint openHf(Path dir, LoadOptions options) {
        Path configFile = dir.resolve("config.json");
        JsonNode configNode = Json.readObjectFile(configFile);
        ModelConfig config = ConfigJson.hf(configFile, configNode);
        Path indexFile = dir.resolve(ShardIndex.FILE);
        if (Files.isRegularFile(indexFile))
            return openIndexed(dir, ModelFormat.HF, config, configNode, indexFile, options);
        Path single = dir.resolve("model.safetensors");
        if (!Files.isRegularFile(single))
            throw new ModelFormatException(dir, "no " + ShardIndex.FILE + " and no model.safetensors");
        return open(dir, ModelFormat.HF, config, configNode, List.of(single), null, options);
    }

    private record Index(Path file, Map<String, String> weightMap) {}

    private static Checkpoint open(
            Path dir,
            ModelFormat format,
            ModelConfig config,
            JsonNode configNode,
            List<Path> files,
            Index index,
            LoadOptions options) {
        Arena arena = Arena.ofShared();
        try {
            Map<String, TensorData> tensors = new LinkedHashMap<>();
            for (Path file : files) {
                if (!Files.isRegularFile(file)) {
                    if (index != null)
                        throw new ModelFormatException(
                                index.file(), "lists shard " + file.getFileName() + ", which is missing");
                    throw new ModelFormatException(file, "missing");
                }
                MemorySegment bytes = FileBytes.load(file, arena, options);
                SafetensorsHeader header = SafetensorsHeader.parse(file, bytes);
                MemorySegment data = bytes.asSlice(header.dataStart());
                for (SafetensorsHeader.Entry e : header.entries()) {
                    TensorData previous = tensors.get(e.name());
                    if (previous != null)
                        throw new ModelFormatException(
                                file,
                                SafetensorsHeader.safe(e.name()),
                                "also stored in " + previous.file().getFileName());
                    if (index != null) {
                        String listed = index.weightMap().get(e.name());
                        if (listed == null)
                            throw new ModelFormatException(
                                    file, SafetensorsHeader.safe(e.name()), "not listed in " + ShardIndex.FILE);
                        if (!listed.equals(file.getFileName().toString()))
                            throw new ModelFormatException(
                                    file,
                                    SafetensorsHeader.safe(e.name()),
                                    ShardIndex.FILE + " places it in " + listed);
                    }
                    tensors.put(
                            e.name(),
                            new TensorData(
                                    e.name(), e.dtype(), e.shape(), data.asSlice(e.begin(), e.byteSize()), file));
                }
            }
            if (index != null)
                for (Map.Entry<String, String> e : index.weightMap().entrySet())
                    if (!tensors.containsKey(e.getKey()))
                        throw new ModelFormatException(
                                dir.resolve(e.getValue()),
                                SafetensorsHeader.safe(e.getKey()),
                                "listed in " + ShardIndex.FILE + " but missing from the shard");
            return new Checkpoint(dir, format, config, tensors, Json.toPlainMap(configNode), arena, options);
        } catch (GossException e) {
            arena.close();
            throw e;
        } catch (RuntimeException | Error e) {
            arena.close();
            throw new ModelFormatException(dir, "cannot be read (" + e + ")", e);
        }
    }
}
