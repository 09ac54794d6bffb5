package io.gossgpu.model.gguf;

import io.gossgpu.model.Checkpoint;
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
    /** Chunk for reads without mmap: ByteBuffers address at most 2 GiB. */
    private static final int READ_CHUNK = 64 << 20;

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
            MemorySegment bytes = load(file, options, arena);
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

    private static MemorySegment load(Path file, LoadOptions options, Arena arena) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (options.mmap()) return ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            MemorySegment seg = arena.allocate(Math.max(size, 1), 64).asSlice(0, size);
            long pos = 0;
            while (pos < size) {
                ByteBuffer buf = seg.asSlice(pos, Math.min(READ_CHUNK, size - pos)).asByteBuffer();
                while (buf.hasRemaining()) {
                    int n = ch.read(buf, pos + buf.position());
                    if (n < 0) throw new ModelFormatException(file, "file shrank while being read (at byte " + pos + ")");
                }
                pos += buf.capacity();
            }
            return seg;
        } catch (IOException e) {
            throw new ModelFormatException(file, "cannot read: " + e.getMessage(), e);
        } catch (OutOfMemoryError e) {
            throw new ModelFormatException(file, "not enough memory to load the file without mmap (" + e.getMessage() + ")", e);
        }
    }
}
