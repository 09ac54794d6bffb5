package io.gossgpu.model.safetensors;

import com.fasterxml.jackson.databind.JsonNode;
import io.gossgpu.model.DType;
import io.gossgpu.model.Json;
import io.gossgpu.model.ModelFormatException;
import io.gossgpu.quant.LE;
import java.lang.foreign.MemorySegment;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * The parsed and validated header of one safetensors file: 8-byte little-endian header length N,
 * N bytes of UTF-8 JSON {@code {name: {dtype, shape, data_offsets}, "__metadata__": {...}}}, then the
 * data section, which the tensors must cover exactly (no overlaps, no holes, nothing past the end),
 * as the reference implementation requires.
 *
 * @param dataStart byte offset of the data section within the file
 * @param entries   tensors in data order
 * @param metadata  the {@code __metadata__} strings (empty when absent)
 */
record SafetensorsHeader(long dataStart, List<Entry> entries, Map<String, String> metadata) {

    /** Larger headers are corrupt, whatever they claim (real ones are well under 1 MB). */
    static final long MAX_HEADER_BYTES = 100L << 20;

    /** One tensor of the header; {@code begin}/{@code end} are relative to the data section. */
    record Entry(String name, DType dtype, long[] shape, long begin, long end) {
        long byteSize() {
            return end - begin;
        }

        @Override
        public String toString() {
            return name + " " + dtype + Arrays.toString(shape);
        }
    }

    /** Parses and checks the header of {@code file}, whose whole content is {@code bytes}. */
    static SafetensorsHeader parse(Path file, MemorySegment bytes) {
        long size = bytes.byteSize();
        if (size < 8)
            throw new ModelFormatException(
                    file, "not a safetensors file: " + size + " bytes, shorter than the 8-byte header length");
        long n = bytes.get(LE.I64, 0);
        if (n < 2 || n > MAX_HEADER_BYTES)
            throw new ModelFormatException(
                    file,
                    "not a safetensors file: header length " + Long.toUnsignedString(n) + " is absurd (file has " + size
                            + " bytes)");
        if (8 + n > size)
            throw new ModelFormatException(
                    file, "truncated: header length " + n + " runs past the end of the file (" + size + " bytes)");
        byte[] raw = bytes.asSlice(8, n).toArray(LE.U8);
        JsonNode root = Json.parse(file, Json.utf8(file, raw, "header"), "header");
        if (!root.isObject())
            throw new ModelFormatException(file, "header must be a JSON object, got " + Json.kind(root));

        long dataSize = size - 8 - n;
        List<Entry> entries = new ArrayList<>();
        Map<String, String> metadata = Map.of();
        for (Map.Entry<String, JsonNode> e : root.properties()) {
            String name = e.getKey();
            if (!Json.isWellFormed(name))
                throw new ModelFormatException(file, "header has a tensor name that is not valid UTF-8");
            if (name.equals("__metadata__")) {
                metadata = metadata(file, e.getValue());
                continue;
            }
            entries.add(entry(file, name, e.getValue(), dataSize));
        }
        entries.sort(Comparator.comparingLong(Entry::begin).thenComparingLong(Entry::end));
        long pos = 0;
        Entry previous = null;
        for (Entry t : entries) {
            if (t.begin() < pos)
                throw new ModelFormatException(
                        file,
                        safe(t.name()),
                        "data_offsets [" + t.begin() + ", " + t.end() + ") overlap tensor '" + safe(previous.name())
                                + "' [" + previous.begin() + ", " + previous.end() + ")");
            if (t.begin() > pos)
                throw new ModelFormatException(
                        file,
                        safe(t.name()),
                        "hole in the data section: " + (t.begin() - pos) + " unused bytes before it (at " + pos + ")");
            pos = t.end();
            previous = t;
        }
        if (pos != dataSize)
            throw new ModelFormatException(
                    file,
                    "data section has " + dataSize + " bytes but the tensors cover " + pos + " (" + (dataSize - pos)
                            + " trailing bytes)");
        return new SafetensorsHeader(8 + n, List.copyOf(entries), metadata);
    }

    private static Map<String, String> metadata(Path file, JsonNode node) {
        if (!node.isObject())
            throw new ModelFormatException(file, "header __metadata__ must be an object, got " + Json.kind(node));
        Map<String, String> out = new java.util.LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> m : node.properties()) {
            if (!m.getValue().isTextual())
                throw new ModelFormatException(
                        file,
                        "header __metadata__ value of '" + safe(m.getKey()) + "' must be a string, got "
                                + Json.kind(m.getValue()));
            out.put(m.getKey(), m.getValue().textValue());
        }
        return out;
    }

    private static Entry entry(Path file, String name, JsonNode node, long dataSize) {
        String shown = safe(name);
        if (!node.isObject())
            throw new ModelFormatException(file, shown, "header entry must be an object, got " + Json.kind(node));
        JsonNode dtypeNode = node.get("dtype"), shapeNode = node.get("shape"), offsetsNode = node.get("data_offsets");
        if (dtypeNode == null) throw new ModelFormatException(file, shown, "header entry has no dtype");
        if (shapeNode == null) throw new ModelFormatException(file, shown, "header entry has no shape");
        if (offsetsNode == null) throw new ModelFormatException(file, shown, "header entry has no data_offsets");
        if (!dtypeNode.isTextual())
            throw new ModelFormatException(file, shown, "dtype must be a string, got " + Json.kind(dtypeNode));
        DType dtype = dtype(file, shown, dtypeNode.textValue());

        if (!shapeNode.isArray())
            throw new ModelFormatException(file, shown, "shape must be an array, got " + Json.kind(shapeNode));
        if (shapeNode.size() > 8)
            throw new ModelFormatException(file, shown, "shape has " + shapeNode.size() + " dimensions");
        long[] shape = new long[shapeNode.size()];
        long product = 1;
        for (int i = 0; i < shape.length; i++) {
            shape[i] = nonNegative(file, shown, "shape", shapeNode.get(i));
            // even an empty tensor may not claim more elements per slice than a long can count
            if (shape[i] > 0 && product > Long.MAX_VALUE / shape[i])
                throw new ModelFormatException(file, shown, "shape " + shapeNode + " has too many elements");
            product *= Math.max(shape[i], 1);
        }

        if (!offsetsNode.isArray() || offsetsNode.size() != 2)
            throw new ModelFormatException(file, shown, "data_offsets must be an array [begin, end]");
        long begin = nonNegative(file, shown, "data_offsets", offsetsNode.get(0));
        long end = nonNegative(file, shown, "data_offsets", offsetsNode.get(1));
        if (end < begin)
            throw new ModelFormatException(
                    file, shown, "data_offsets [" + begin + ", " + end + "] end before they begin");
        if (end > dataSize)
            throw new ModelFormatException(
                    file,
                    shown,
                    "data_offsets [" + begin + ", " + end + "] run past the end of the file (data section has "
                            + dataSize + " bytes; truncated?)");

        BigInteger exact = BigInteger.ONE;
        for (long d : shape) exact = exact.multiply(BigInteger.valueOf(d));
        BigInteger expectBytes = exact.multiply(BigInteger.valueOf(dtype.blockBytes()));
        if (!expectBytes.equals(BigInteger.valueOf(end - begin)))
            throw new ModelFormatException(
                    file,
                    shown,
                    "shape " + Arrays.toString(shape) + " of " + dtype + " needs " + expectBytes
                            + " bytes but data_offsets [" + begin + ", " + end + "] hold " + (end - begin));
        return new Entry(name, dtype, shape, begin, end);
    }

    /** The safetensors dtypes the engine reads; others are named as unsupported or unknown. */
    static DType dtype(Path file, String tensor, String s) {
        return switch (s) {
            case "F32" -> DType.F32;
            case "F16" -> DType.F16;
            case "BF16" -> DType.BF16;
            case "U8" -> DType.U8;
            case "I32" -> DType.I32;
            case "F64",
                    "I64",
                    "U64",
                    "U32",
                    "I16",
                    "U16",
                    "I8",
                    "BOOL",
                    "F8_E4M3",
                    "F8_E5M2",
                    "F8_E8M0",
                    "F6_E2M3",
                    "F6_E3M2",
                    "F4",
                    "C64",
                    "E8M0" ->
                throw new ModelFormatException(
                        file, tensor, "unsupported dtype " + s + " (goss-gpu reads F32, F16, BF16, U8 and I32)");
            default -> throw new ModelFormatException(file, tensor, "unknown dtype '" + safe(s) + "'");
        };
    }

    private static long nonNegative(Path file, String tensor, String field, JsonNode v) {
        if (v == null || !v.isIntegralNumber())
            throw new ModelFormatException(
                    file, tensor, field + " must hold integers, got " + (v == null ? "nothing" : safe(v.toString())));
        if (!v.canConvertToLong() || v.longValue() < 0)
            throw new ModelFormatException(
                    file, tensor, field + " holds " + safe(v.toString()) + ", outside 0.." + Long.MAX_VALUE);
        return v.longValue();
    }

    /** Shortens untrusted text for an error message. */
    static String safe(String s) {
        String one = s.replaceAll("\\p{Cntrl}", "?");
        return one.length() > 80 ? one.substring(0, 80) + "…" : one;
    }
}
