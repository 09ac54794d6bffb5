package io.gossgpu.model.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GgufMetadataTest {
    @TempDir
    Path dir;

    private GgufHeader roundTrip(int version, GgufFileWriter w) throws Exception {
        Path f = dir.resolve("meta-v" + version + ".gguf");
        w.write(f);
        return GgufParser.parse(MemorySegment.ofArray(Files.readAllBytes(f)), f);
    }

    @Test
    void everyValueTypeRoundTripsInV2AndV3() throws Exception {
        for (int version : new int[] {2, 3}) {
            GgufFileWriter w = new GgufFileWriter(version)
                    .put("u8", new GgufValue(GgufValueType.UINT8, 200))
                    .put("i8", new GgufValue(GgufValueType.INT8, -5))
                    .put("u16", new GgufValue(GgufValueType.UINT16, 60000))
                    .put("i16", new GgufValue(GgufValueType.INT16, -300))
                    .put("u32", new GgufValue(GgufValueType.UINT32, 4_000_000_000L))
                    .put("i32", new GgufValue(GgufValueType.INT32, -70000))
                    .put("f32", new GgufValue(GgufValueType.FLOAT32, 1.5e-5f))
                    .put("bool", new GgufValue(GgufValueType.BOOL, true))
                    .put("str", GgufValue.string("héllo ✓ 🙂"))
                    .put("empty", GgufValue.string(""))
                    .put("u64", new GgufValue(GgufValueType.UINT64, -1L))
                    .put("i64", new GgufValue(GgufValueType.INT64, Long.MIN_VALUE))
                    .put("f64", new GgufValue(GgufValueType.FLOAT64, Math.PI))
                    .put("arr.i32", GgufValue.array(GgufValueType.INT32, List.of(1, -2, 3)))
                    .put("arr.f32", GgufValue.array(GgufValueType.FLOAT32, List.of(0.5f, -0f)))
                    .put("arr.str", GgufValue.array(GgufValueType.STRING, List.of("a", "", "ü")))
                    .put("arr.bool", GgufValue.array(GgufValueType.BOOL, List.of(false, true)))
                    .put("arr.empty", GgufValue.array(GgufValueType.UINT8, List.of()))
                    .put(
                            "arr.nested",
                            GgufValue.array(
                                    GgufValueType.ARRAY,
                                    List.of(
                                            GgufValue.array(GgufValueType.UINT16, List.of(1, 65535)),
                                            GgufValue.array(GgufValueType.STRING, List.of("x")))));
            GgufHeader h = roundTrip(version, w);
            Map<String, Object> m = h.metadata();
            assertEquals(version, h.version());
            assertEquals((short) 200, m.get("u8"));
            assertEquals((byte) -5, m.get("i8"));
            assertEquals(60000, m.get("u16"));
            assertEquals((short) -300, m.get("i16"));
            assertEquals(4_000_000_000L, m.get("u32"));
            assertEquals(-70000, m.get("i32"));
            assertEquals(1.5e-5f, m.get("f32"));
            assertEquals(true, m.get("bool"));
            assertEquals("héllo ✓ 🙂", m.get("str"));
            assertEquals("", m.get("empty"));
            assertEquals(-1L, m.get("u64"));
            assertEquals(Long.MIN_VALUE, m.get("i64"));
            assertEquals(Math.PI, m.get("f64"));
            assertEquals(List.of(1, -2, 3), m.get("arr.i32"));
            assertEquals(List.of(0.5f, -0f), m.get("arr.f32"));
            assertEquals(List.of("a", "", "ü"), m.get("arr.str"));
            assertEquals(List.of(false, true), m.get("arr.bool"));
            assertEquals(List.of(), m.get("arr.empty"));
            assertEquals(List.of(List.of(1, 65535), List.of("x")), m.get("arr.nested"));
            assertEquals(GgufValueType.ARRAY, h.types().get("arr.nested"));
            assertEquals(GgufValueType.UINT64, h.types().get("u64"));
            assertEquals(List.copyOf(m.keySet()), List.copyOf(h.types().keySet()));
            assertTrue(h.tensors().isEmpty());
        }
    }

    @Test
    void vocabularySizedStringArrayLoads() throws Exception {
        List<String> tokens = new ArrayList<>(201088);
        for (int i = 0; i < 201088; i++) tokens.add("<token " + i + ">");
        long t0 = System.nanoTime();
        GgufHeader h = roundTrip(
                3,
                new GgufFileWriter(3)
                        .put("tokenizer.ggml.tokens", GgufValue.array(GgufValueType.STRING, tokens))
                        .put(
                                "tokenizer.ggml.token_type",
                                GgufValue.array(GgufValueType.INT32, java.util.Collections.nCopies(201088, 1))));
        assertEquals(tokens, h.metadata().get("tokenizer.ggml.tokens"));
        assertEquals(201088, ((List<?>) h.metadata().get("tokenizer.ggml.token_type")).size());
        assertTrue(System.nanoTime() - t0 < 20_000_000_000L, "201k-entry arrays took too long");
    }

    /** A 250 MB metadata array used to take 40x its size in heap and a minute: now a view. */
    @Test
    void hugeMetadataArraysAreReadInPlace() throws Exception {
        Path f = dir.resolve("huge.gguf");
        long n = 250_000_000L;
        java.nio.ByteBuffer h = java.nio.ByteBuffer.allocate(64).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        h.putInt(GgufParser.MAGIC).putInt(3).putLong(0).putLong(2);
        h.putLong(3)
                .put("big".getBytes())
                .putInt(GgufValueType.ARRAY.id())
                .putInt(GgufValueType.UINT8.id())
                .putLong(n);
        h.flip();
        java.nio.ByteBuffer tail = java.nio.ByteBuffer.allocate(64).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        tail.put((byte) 7)
                .putLong(4)
                .put("last".getBytes())
                .putInt(GgufValueType.STRING.id())
                .putLong(2)
                .put("ok".getBytes())
                .flip();
        try (var ch = java.nio.channels.FileChannel.open(
                f, java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(h);
            ch.write(tail, h.limit() + n - 1); // a sparse file: zeros, then the last element 7 and a second key
        }
        long t0 = System.nanoTime();
        try (var arena = java.lang.foreign.Arena.ofConfined();
                var ch = java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.READ)) {
            GgufHeader header =
                    GgufParser.parse(ch.map(java.nio.channels.FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena), f);
            List<?> big = (List<?>) header.metadata().get("big");
            assertEquals(n, big.size());
            assertEquals((short) 0, big.get(0));
            assertEquals((short) 7, big.get((int) n - 1));
            assertEquals("ok", header.metadata().get("last"));
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertTrue(seconds < 5, "parsing took " + seconds + " s");
    }
}
