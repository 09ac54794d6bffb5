package io.gossgpu.model.gguf;

import io.gossgpu.GossException;
import io.gossgpu.model.DType;
import io.gossgpu.model.GgufSplit;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Writes a little-endian GGUF file: metadata, tensor infos, then each tensor's data, aligned. The
 * output file is mapped read-write and every tensor is filled in place by its own callback, so a
 * large model never sits on the Java heap.
 */
public final class GgufFileWriter {
    /** Fills one tensor's bytes; the segment is exactly the tensor's byte size. */
    public interface Filler extends Consumer<MemorySegment> {}

    private record Entry(String name, GgmlType type, long[] ne, long byteSize, Filler filler) {}

    private final int version;
    private final Map<String, GgufValue> metadata = new LinkedHashMap<>();
    private final List<Entry> tensors = new ArrayList<>();
    private int alignment = GgufParser.DEFAULT_ALIGNMENT;

    /** @param version 2 or 3 (both store counts and lengths as u64) */
    public GgufFileWriter(int version) {
        if (version != 2 && version != 3) throw new IllegalArgumentException("GGUF version " + version);
        this.version = version;
    }

    public GgufFileWriter put(String key, GgufValue value) {
        metadata.put(key, value);
        if (key.equals(GgufParser.ALIGNMENT_KEY)) alignment = ((Number) value.value()).intValue();
        return this;
    }

    /** Writes the alignment in force as {@code general.alignment} (llama.cpp's files carry it; a reader defaults to 32 without it). */
    public GgufFileWriter putAlignment() {
        return put(GgufParser.ALIGNMENT_KEY, GgufValue.u32(alignment));
    }

    /** Adds a tensor with dimensions in GGUF order ({@code ne[0]} contiguous). */
    public GgufFileWriter tensor(String name, GgmlType type, long[] ne, Filler filler) {
        DType d = type.dtype();
        long elements = 1;
        for (long n : ne) elements = Math.multiplyExact(elements, n);
        if (ne[0] % d.blockSize() != 0)
            throw new GossException(name + ": row of " + ne[0] + " values is not whole " + type + " blocks");
        tensors.add(new Entry(name, type, ne.clone(), d.rowBytes(elements), filler));
        return this;
    }

    public void write(Path file) {
        write(file, metadata, tensors);
    }

    /**
     * Writes the model as llama.cpp's gguf-split does: {@code shards} files {@code base-0000i-of-0000N.gguf} in
     * {@code dir}, the tensors divided between them in order, the metadata in the first, and every file carrying
     * {@link GgufSplit#NO}, {@link GgufSplit#COUNT} and {@link GgufSplit#TENSORS}. Returns the first shard.
     */
    public Path writeSplit(Path dir, String base, int shards) {
        if (shards < 1 || shards > tensors.size())
            throw new IllegalArgumentException(shards + " shards of " + tensors.size() + " tensors");
        Path first = null;
        int from = 0;
        for (int s = 0; s < shards; s++) {
            int to = (int) ((long) tensors.size() * (s + 1) / shards);
            Map<String, GgufValue> meta = new LinkedHashMap<>();
            if (s == 0) meta.putAll(metadata);
            else if (metadata.containsKey(GgufParser.ALIGNMENT_KEY))
                meta.put(GgufParser.ALIGNMENT_KEY, metadata.get(GgufParser.ALIGNMENT_KEY));
            meta.put(GgufSplit.NO, new GgufValue(GgufValueType.UINT16, s));
            meta.put(GgufSplit.COUNT, new GgufValue(GgufValueType.UINT16, shards));
            meta.put(GgufSplit.TENSORS, new GgufValue(GgufValueType.INT32, tensors.size()));
            Path file = dir.resolve(GgufSplit.shardName(base, s + 1, shards));
            write(file, meta, tensors.subList(from, to));
            if (s == 0) first = file;
            from = to;
        }
        return first;
    }

    private void write(Path file, Map<String, GgufValue> metadata, List<Entry> tensors) {
        Out h = new Out();
        h.i32(GgufParser.MAGIC);
        h.i32(version);
        h.i64(tensors.size());
        h.i64(metadata.size());
        for (Map.Entry<String, GgufValue> kv : metadata.entrySet()) {
            h.string(kv.getKey());
            h.i32(kv.getValue().type().id());
            value(h, kv.getValue().type(), kv.getValue().value());
        }
        long offset = 0;
        long[] offsets = new long[tensors.size()];
        for (int i = 0; i < tensors.size(); i++) {
            Entry t = tensors.get(i);
            h.string(t.name());
            h.i32(t.ne().length);
            for (long n : t.ne()) h.i64(n);
            h.i32(t.type().id());
            h.i64(offset);
            offsets[i] = offset;
            offset = GgufParser.alignUp(offset + t.byteSize(), alignment);
        }
        byte[] header = h.toByteArray();
        long dataStart = GgufParser.alignUp(header.length, alignment);
        long total = tensors.isEmpty()
                ? header.length
                : dataStart + offsets[tensors.size() - 1] + tensors.getLast().byteSize();
        try (FileChannel ch = FileChannel.open(
                        file,
                        StandardOpenOption.CREATE,
                        StandardOpenOption.TRUNCATE_EXISTING,
                        StandardOpenOption.READ,
                        StandardOpenOption.WRITE);
                Arena arena = Arena.ofConfined()) {
            MemorySegment out = ch.map(FileChannel.MapMode.READ_WRITE, 0, total, arena);
            MemorySegment.copy(MemorySegment.ofArray(header), 0, out, 0, header.length);
            for (int i = 0; i < tensors.size(); i++) {
                Entry t = tensors.get(i);
                t.filler().accept(out.asSlice(dataStart + offsets[i], t.byteSize()));
            }
            out.force();
        } catch (IOException e) {
            throw new GossException(file + ": cannot write GGUF: " + e.getMessage(), e);
        }
    }

    private static void value(Out h, GgufValueType type, Object v) {
        switch (type) {
            case UINT8, INT8 -> h.write(((Number) v).intValue());
            case UINT16, INT16 -> h.i16(((Number) v).intValue());
            case UINT32, INT32 -> h.i32(((Number) v).intValue());
            case UINT64, INT64 -> h.i64(((Number) v).longValue());
            case FLOAT32 -> h.i32(Float.floatToRawIntBits(((Number) v).floatValue()));
            case FLOAT64 -> h.i64(Double.doubleToRawLongBits(((Number) v).doubleValue()));
            case BOOL -> h.write((Boolean) v ? 1 : 0);
            case STRING -> h.string((String) v);
            case ARRAY -> {
                GgufValue.Array a = (GgufValue.Array) v;
                h.i32(a.elementType().id());
                h.i64(a.items().size());
                for (Object item : a.items()) value(h, a.elementType(), item instanceof GgufValue g ? g.value() : item);
            }
        }
    }

    /** A growable little-endian byte buffer for the header. */
    private static final class Out extends ByteArrayOutputStream {
        void i16(int v) {
            write(v);
            write(v >>> 8);
        }

        void i32(int v) {
            i16(v);
            i16(v >>> 16);
        }

        void i64(long v) {
            i32((int) v);
            i32((int) (v >>> 32));
        }

        void string(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            i64(b.length);
            write(b, 0, b.length);
        }
    }
}
