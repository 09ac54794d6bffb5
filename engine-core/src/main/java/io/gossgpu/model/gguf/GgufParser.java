package io.gossgpu.model.gguf;

import io.gossgpu.model.ModelFormatException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Parses and validates a GGUF v2/v3 header (metadata and tensor infos) from a file's bytes. Every
 * size, count and offset is checked against the file before it is used.
 */
final class GgufParser {
    /** "GGUF" read as a little-endian u32. */
    static final int MAGIC = 0x46554747;

    static final int DEFAULT_ALIGNMENT = 32;
    static final String ALIGNMENT_KEY = "general.alignment";
    static final int MAX_DIMS = 4;
    /** Deepest nesting of arrays accepted (real files nest at most once). */
    static final int MAX_ARRAY_DEPTH = 8;
    /** Smallest possible tensor info: name length, one name byte, n_dims, one dim, type, offset. */
    private static final int MIN_TENSOR_INFO_BYTES = 8 + 1 + 4 + 8 + 4 + 8;
    /** Smallest possible key/value: key length, one key byte, type, a one-byte value. */
    private static final int MIN_KV_BYTES = 8 + 1 + 4 + 1;

    private GgufParser() {}

    static GgufHeader parse(MemorySegment data, Path file) {
        GgufCursor in = new GgufCursor(data, file);
        if (data.byteSize() < 4 || in.i32("magic") != MAGIC) throw in.fail("not a GGUF file (bad magic)");
        int version = in.i32("version");
        checkVersion(in, version);
        long tensorCount = in.count(in.i64("tensor count"), MIN_TENSOR_INFO_BYTES, "tensor count");
        long kvCount = in.count(in.i64("metadata count"), MIN_KV_BYTES, "metadata key/value count");

        Map<String, Object> metadata = new LinkedHashMap<>();
        Map<String, GgufValueType> types = new LinkedHashMap<>();
        for (long i = 0; i < kvCount; i++) {
            String key = in.string("metadata key #" + i);
            if (metadata.containsKey(key)) throw in.fail("duplicate metadata key '" + key + "'");
            long typeId = in.u32("type of metadata key '" + key + "'");
            GgufValueType type = GgufValueType.byId(typeId);
            if (type == null) throw in.fail("metadata key '" + key + "' has unknown value type " + typeId);
            metadata.put(key, value(in, type, "metadata key '" + key + "'", 0));
            types.put(key, type);
        }
        int alignment = alignment(in, metadata.get(ALIGNMENT_KEY));

        List<GgufTensorInfo> tensors = new ArrayList<>((int) Math.min(tensorCount, 4096));
        Set<String> names = new HashSet<>();
        for (long i = 0; i < tensorCount; i++) {
            GgufTensorInfo t = tensorInfo(in, i, alignment);
            if (!names.add(t.name())) throw new ModelFormatException(file, t.name(), "duplicate tensor name");
            tensors.add(t);
        }
        long dataOffset = alignUp(in.position(), alignment);
        checkData(file, data.byteSize(), dataOffset, tensors);
        return new GgufHeader(version, metadata, types, List.copyOf(tensors), alignment, dataOffset);
    }

    private static void checkVersion(GgufCursor in, int version) {
        if (version == 2 || version == 3) return;
        int swapped = Integer.reverseBytes(version);
        if (swapped >= 1 && swapped <= 3)
            throw in.fail(
                    "big-endian GGUF (version " + swapped + ") is not supported; convert it to a little-endian GGUF");
        if (version == 1)
            throw in.fail("GGUF version 1 is not supported (re-convert the model with a current llama.cpp)");
        throw in.fail("unsupported GGUF version " + Integer.toUnsignedString(version) + " (supported: 2 and 3)");
    }

    private static Object value(GgufCursor in, GgufValueType type, String what, int depth) {
        return switch (type) {
            case UINT8 -> (short) in.u8(what);
            case INT8 -> in.i8(what);
            case UINT16 -> in.i16(what) & 0xffff;
            case INT16 -> in.i16(what);
            case UINT32 -> in.u32(what);
            case INT32 -> in.i32(what);
            case FLOAT32 -> in.f32(what);
            case BOOL -> {
                int b = in.u8(what);
                if (b > 1) throw in.fail(what + ": bool value " + b + " is neither 0 nor 1");
                yield b == 1;
            }
            case STRING -> in.string(what);
            case UINT64, INT64 -> in.i64(what);
            case FLOAT64 -> in.f64(what);
            case ARRAY -> array(in, what, depth);
        };
    }

    private static List<Object> array(GgufCursor in, String what, int depth) {
        if (depth >= MAX_ARRAY_DEPTH) throw in.fail(what + ": arrays nested deeper than " + MAX_ARRAY_DEPTH);
        long typeId = in.u32(what + " element type");
        GgufValueType type = GgufValueType.byId(typeId);
        if (type == null) throw in.fail(what + ": unknown array element type " + typeId);
        long n = in.count(in.i64(what + " array length"), type.minBytes(), what + ": array length");
        if (n > Integer.MAX_VALUE - 8) throw in.fail(what + ": array of " + n + " elements is too long");
        if (type == GgufValueType.STRING) return GgufArray.strings(in, (int) n, what);
        if (type != GgufValueType.ARRAY) {
            if (type == GgufValueType.BOOL) checkBools(in, n, what);
            return GgufArray.fixed(in, type, (int) n, what);
        }
        List<Object> out = new ArrayList<>((int) n);
        for (long i = 0; i < n; i++) out.add(value(in, type, what, depth + 1));
        return List.copyOf(out);
    }

    private static void checkBools(GgufCursor in, long n, String what) {
        for (long i = 0, p = in.position(); i < n; i++)
            if ((in.data().get(io.gossgpu.quant.LE.U8, p + i) & 0xff) > 1)
                throw in.fail(what + ": bool value " + (in.data().get(io.gossgpu.quant.LE.U8, p + i) & 0xff)
                        + " is neither 0 nor 1");
    }

    private static int alignment(GgufCursor in, Object value) {
        if (value == null) return DEFAULT_ALIGNMENT;
        long a = switch (value) {
            case Short s -> s;
            case Byte b -> b;
            case Integer i -> i;
            case Long l -> l;
            default ->
                throw in.fail(ALIGNMENT_KEY + " must be an integer, got "
                        + value.getClass().getSimpleName());
        };
        if (a <= 0 || a > (1 << 30) || Long.bitCount(a) != 1)
            throw in.fail(ALIGNMENT_KEY + " must be a power of two, got " + a);
        return (int) a;
    }

    private static GgufTensorInfo tensorInfo(GgufCursor in, long index, int alignment) {
        Path file = in.file();
        String name = in.string("name of tensor #" + index);
        if (name.isEmpty()) throw in.fail("tensor #" + index + " has an empty name");
        long nDims = in.u32("dimension count of tensor '" + name + "'");
        if (nDims == 0 || nDims > MAX_DIMS)
            throw new ModelFormatException(file, name, "has " + nDims + " dimensions (1 to " + MAX_DIMS + " allowed)");
        long[] ne = new long[(int) nDims];
        long elements = 1;
        for (int d = 0; d < nDims; d++) {
            ne[d] = in.i64("dimensions of tensor '" + name + "'");
            if (ne[d] <= 0)
                throw new ModelFormatException(file, name, "dimension " + d + " is " + ne[d] + " (must be positive)");
            try {
                elements = Math.multiplyExact(elements, ne[d]);
            } catch (ArithmeticException e) {
                throw new ModelFormatException(file, name, "element count overflows: " + Arrays.toString(ne));
            }
        }
        long typeId = in.u32("type of tensor '" + name + "'");
        GgmlType type = GgmlType.byId(typeId);
        if (type == null)
            throw new ModelFormatException(
                    file,
                    name,
                    "unsupported tensor type " + GgmlType.describe(typeId)
                            + " (goss-gpu reads F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K to Q6_K, IQ4_NL, IQ4_XS and MXFP4)");
        int block = type.dtype().blockSize();
        if (ne[0] % block != 0)
            throw new ModelFormatException(
                    file,
                    name,
                    "first dimension " + ne[0] + " is not a multiple of the " + type + " block size " + block);
        long byteSize;
        try {
            byteSize = Math.multiplyExact(elements / block, (long) type.dtype().blockBytes());
        } catch (ArithmeticException e) {
            throw new ModelFormatException(file, name, "byte size overflows: " + Arrays.toString(ne));
        }
        long offset = in.i64("data offset of tensor '" + name + "'");
        if (offset < 0 || offset % alignment != 0)
            throw new ModelFormatException(
                    file,
                    name,
                    "data offset " + Long.toUnsignedString(offset) + " is not a multiple of the alignment "
                            + alignment);
        return new GgufTensorInfo(name, ne, type, offset, byteSize);
    }

    private static void checkData(Path file, long fileSize, long dataOffset, List<GgufTensorInfo> tensors) {
        if (tensors.isEmpty()) return;
        if (dataOffset > fileSize)
            throw new ModelFormatException(
                    file,
                    "truncated: the data section would start at " + dataOffset + " but the file ends at " + fileSize);
        long available = fileSize - dataOffset;
        for (GgufTensorInfo t : tensors)
            if (t.offset() > available || t.byteSize() > available - t.offset())
                throw new ModelFormatException(
                        file,
                        t.name(),
                        "data (" + t.byteSize() + " bytes at data offset " + t.offset()
                                + ") runs past the end of the file (truncated?)");
        List<GgufTensorInfo> byOffset = new ArrayList<>(tensors);
        byOffset.sort(Comparator.comparingLong(GgufTensorInfo::offset));
        for (int i = 1; i < byOffset.size(); i++) {
            GgufTensorInfo prev = byOffset.get(i - 1), t = byOffset.get(i);
            if (t.offset() < prev.offset() + prev.byteSize())
                throw new ModelFormatException(file, t.name(), "data overlaps tensor '" + prev.name() + "'");
        }
    }

    static long alignUp(long pos, long alignment) {
        return (pos + alignment - 1) / alignment * alignment;
    }
}
