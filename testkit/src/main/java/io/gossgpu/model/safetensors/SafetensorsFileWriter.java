package io.gossgpu.model.safetensors;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gossgpu.GossException;
import io.gossgpu.model.DType;
import io.gossgpu.model.Json;
import io.gossgpu.quant.LE;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Writes one safetensors file: the header (JSON padded with spaces so the data section starts on a
 * 64-byte boundary), then every tensor back to back in the order given. The output file is mapped
 * read-write and each tensor is filled in place, so nothing of model size is ever on the heap.
 */
public final class SafetensorsFileWriter {
    /** The data section starts at a multiple of this (a multiple of 8, as the format requires). */
    static final int DATA_ALIGN = 64;

    /** One tensor to write: {@code fill} writes exactly {@link #byteSize()} bytes into the segment it gets. */
    public record Tensor(String name, DType dtype, long[] shape, Consumer<MemorySegment> fill) {
        public long byteSize() {
            long n = 1;
            for (long d : shape) n = Math.multiplyExact(n, d);
            return Math.multiplyExact(n, (long) dtype.blockBytes());
        }

        @Override
        public String toString() {
            return name + " " + dtype + Arrays.toString(shape);
        }
    }

    private SafetensorsFileWriter() {}

    /**
     * Writes {@code tensors} to {@code file} (replacing it) with {@code metadata} as {@code __metadata__};
     * returns the file size. The bytes go to {@code file.partial} first, renamed when complete, so an
     * interrupted write never leaves a plausible but zero-filled model behind.
     */
    public static long write(Path file, List<Tensor> tensors, Map<String, String> metadata) {
        byte[] header = header(tensors, metadata);
        long total = 8 + header.length;
        for (Tensor t : tensors) total = Math.addExact(total, t.byteSize());
        Path partial = file.resolveSibling(file.getFileName() + ".partial");
        boolean done = false;
        try {
            try (FileChannel ch = FileChannel.open(
                            partial,
                            StandardOpenOption.CREATE,
                            StandardOpenOption.TRUNCATE_EXISTING,
                            StandardOpenOption.READ,
                            StandardOpenOption.WRITE);
                    Arena arena = Arena.ofConfined()) {
                MemorySegment out = ch.map(FileChannel.MapMode.READ_WRITE, 0, total, arena);
                out.set(LE.I64, 0, header.length);
                MemorySegment.copy(header, 0, out, LE.U8, 8, header.length);
                long pos = 8 + header.length;
                for (Tensor t : tensors) {
                    long n = t.byteSize();
                    t.fill().accept(out.asSlice(pos, n));
                    pos += n;
                }
                out.force();
            }
            try {
                Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING);
            }
            done = true;
        } catch (IOException e) {
            throw new GossException(file + ": cannot write (" + e.getMessage() + ")", e);
        } finally {
            if (!done) {
                try {
                    Files.deleteIfExists(partial);
                } catch (IOException ignored) {
                    // the write already failed; that error is the one to report
                }
            }
        }
        return total;
    }

    /** The header bytes: compact JSON padded with spaces to the data alignment. */
    static byte[] header(List<Tensor> tensors, Map<String, String> metadata) {
        ObjectNode root = Json.MAPPER.createObjectNode();
        if (!metadata.isEmpty()) {
            ObjectNode m = root.putObject("__metadata__");
            metadata.forEach(m::put);
        }
        long offset = 0;
        for (Tensor t : tensors) {
            if (root.has(t.name()))
                throw new GossException("safetensors writer: tensor '" + t.name() + "' given twice");
            ObjectNode e = root.putObject(t.name());
            e.put("dtype", dtypeName(t.dtype()));
            ArrayNode shape = e.putArray("shape");
            for (long d : t.shape()) shape.add(d);
            long end = offset + t.byteSize();
            e.putArray("data_offsets").add(offset).add(end);
            offset = end;
        }
        byte[] json;
        try {
            json = Json.MAPPER
                    .writer()
                    .without(SerializationFeature.INDENT_OUTPUT)
                    .writeValueAsBytes(root);
        } catch (JsonProcessingException e) {
            throw new GossException("safetensors writer: cannot build the header (" + e.getMessage() + ")", e);
        }
        int padded = (int) (((8L + json.length + DATA_ALIGN - 1) / DATA_ALIGN) * DATA_ALIGN - 8);
        byte[] out = Arrays.copyOf(json, padded);
        Arrays.fill(out, json.length, padded, (byte) ' ');
        return out;
    }

    /** The safetensors name of a dtype the format can hold. */
    public static String dtypeName(DType d) {
        return switch (d) {
            case F32 -> "F32";
            case F16 -> "F16";
            case BF16 -> "BF16";
            case U8 -> "U8";
            case I32 -> "I32";
            default -> throw new GossException("safetensors cannot hold " + d + " tensors");
        };
    }
}
