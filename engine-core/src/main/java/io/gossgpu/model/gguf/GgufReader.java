package io.gossgpu.model.gguf;

import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.FileBytes;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelFormat;
import io.gossgpu.model.ModelFormatException;
import io.gossgpu.model.TensorData;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Opens a llama.cpp GGUF file (v2 or v3, little-endian) of a gpt-oss model: validates the header,
 * maps the file (or reads it into native memory) into one shared arena that the returned
 * {@link Checkpoint} owns, and exposes each tensor as a view of those bytes, shape outermost-first.
 */
public final class GgufReader {
    private GgufReader() {}

    /** True when {@code file} starts with the bytes "GGUF". */
    public static boolean hasMagic(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(4);
            while (b.hasRemaining()) if (ch.read(b) < 0) return false;
            return b.get(0) == 'G' && b.get(1) == 'G' && b.get(2) == 'U' && b.get(3) == 'F';
        } catch (IOException e) {
            return false;
        }
    }

    public static Checkpoint open(Path file, LoadOptions options) {
        Arena arena = Arena.ofShared();
        try {
            MemorySegment bytes = FileBytes.load(file, arena, options);
            GgufHeader header = GgufParser.parse(bytes, file);
            Map<String, TensorData> tensors = new LinkedHashMap<>();
            for (GgufTensorInfo t : header.tensors())
                tensors.put(t.name(), new TensorData(t.name(), t.type().dtype(), t.shape(),
                        bytes.asSlice(header.dataOffset() + t.offset(), t.byteSize()), file));
            ModelConfig config = GgufConfig.from(header.metadata(), tensors, file);
            return new Checkpoint(file, ModelFormat.GGUF, config, tensors, header.metadata(), arena);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }
}
