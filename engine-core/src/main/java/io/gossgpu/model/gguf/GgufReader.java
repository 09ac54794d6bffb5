package io.gossgpu.model.gguf;

import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.FileBytes;
import io.gossgpu.model.GgufSplit;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelFormat;
import io.gossgpu.model.ModelFormatException;
import io.gossgpu.model.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Opens a llama.cpp GGUF file (v2 or v3, little-endian) of a gpt-oss model: validates the header,
 * maps the file (or reads it into native memory) into one shared arena that the returned
 * {@link Checkpoint} owns, and exposes each tensor as a view of those bytes, shape outermost-first.
 */
public final class GgufReader {
    private GgufReader() {}

    /** Opens {@code file}, or, when it is the first shard of a split GGUF, every shard as one model. */
    public static Checkpoint open(Path file, LoadOptions options) {
        List<Path> shards = GgufSplit.shards(file);
        Arena arena = Arena.ofShared();
        try {
            Map<String, TensorData> tensors = new LinkedHashMap<>();
            GgufHeader first = null;
            for (int s = 0; s < shards.size(); s++) {
                Path shard = shards.get(s);
                MemorySegment bytes = FileBytes.load(shard, arena, options);
                GgufHeader header = GgufParser.parse(bytes, shard);
                if (shards.size() > 1) checkShard(shard, header, s, shards.size());
                if (first == null) first = header;
                for (GgufTensorInfo t : header.tensors()) {
                    TensorData previous = tensors.put(
                            t.name(),
                            new TensorData(
                                    t.name(),
                                    t.type().dtype(),
                                    t.shape(),
                                    bytes.asSlice(header.dataOffset() + t.offset(), t.byteSize()),
                                    shard));
                    if (previous != null)
                        throw new ModelFormatException(
                                shard,
                                t.name(),
                                "also stored in " + previous.file().getFileName());
                }
            }
            if (shards.size() > 1
                    && first.metadata().get(GgufSplit.TENSORS) instanceof Number n
                    && n.longValue() != tensors.size())
                throw new ModelFormatException(
                        file,
                        GgufSplit.TENSORS + " is " + n + " but the " + shards.size() + " shards hold " + tensors.size()
                                + " tensors");
            ModelConfig config = GgufConfig.from(first.metadata(), tensors, file);
            ModelFormat format = GgufConfig.OLLAMA_ARCH.equals(first.metadata().get(GgufConfig.ARCH_KEY))
                    ? ModelFormat.OLLAMA
                    : ModelFormat.GGUF;
            return new Checkpoint(file, format, config, tensors, first.metadata(), arena, options);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    /** A shard must say it is shard {@code index} of {@code count}, as its file name does. */
    private static void checkShard(Path shard, GgufHeader header, int index, int count) {
        Object no = header.metadata().get(GgufSplit.NO), n = header.metadata().get(GgufSplit.COUNT);
        if (!(no instanceof Number a) || a.intValue() != index || !(n instanceof Number b) || b.intValue() != count)
            throw new ModelFormatException(
                    shard,
                    "its name says split shard " + (index + 1) + " of " + count + " but its metadata says "
                            + GgufSplit.NO + " " + no + " of " + GgufSplit.COUNT + " " + n + " (" + GgufSplit.NO
                            + " counts from 0)");
    }
}
