package io.gossgpu.model.gguf;

import static io.gossgpu.model.gguf.GgufFixtures.indexOf;
import static io.gossgpu.model.gguf.GgufFixtures.putI32;
import static io.gossgpu.model.gguf.GgufFixtures.putI64;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelFormatException;
import io.gossgpu.model.ModelWeights;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each way a GGUF file can be broken gives one {@link ModelFormatException} naming the file (and tensor). */
class GgufValidationTest {
    @TempDir
    Path dir;

    private int n;

    private Path file(byte[] bytes) throws Exception {
        Path f = dir.resolve("case" + (n++) + ".gguf");
        Files.write(f, bytes);
        return f;
    }

    private String rejects(byte[] bytes, String... expected) throws Exception {
        Path f = file(bytes);
        for (boolean mmap : new boolean[] {true, false}) {
            ModelFormatException e = assertThrows(ModelFormatException.class, () -> {
                try (Checkpoint c = Checkpoint.open(f, new LoadOptions(mmap))) {
                    ModelWeights.of(c);
                }
            });
            String m = e.getMessage();
            assertTrue(m.startsWith(f.toString()), "names the file: " + m);
            assertTrue(!m.contains("\n"), "one line: " + m);
            for (String s : expected) assertTrue(m.contains(s), "'" + m + "' should mention '" + s + "'");
        }
        return null;
    }

    private byte[] micro() {
        return GgufFixtures.microModel(dir);
    }

    private static GgufFixtures.Raw raw(long tensors, long kvs) {
        return new GgufFixtures.Raw().header(3, tensors, kvs);
    }

    @Test
    void validMicroModelLoads() throws Exception {
        byte[] b = micro();
        try (Checkpoint c = Checkpoint.open(file(b), LoadOptions.defaults())) {
            assertEquals(GgufFixtures.micro(), c.config());
            ModelWeights.of(c);
        }
    }

    @Test
    void supportedTensorTypesMapToDTypesWithShapesReversed() throws Exception {
        byte[] b = raw(5, 0)
                .tensor("f32", new long[] {3, 2}, 0, 0)
                .tensor("f16", new long[] {5}, 1, 32)
                .tensor("q8", new long[] {64, 1, 2}, 8, 64)
                .tensor("bf16", new long[] {7}, 30, 224)
                .tensor("mxfp4", new long[] {96, 2}, 39, 256)
                .data(32, 256 + 2 * 51)
                .bytes();
        GgufHeader h = GgufParser.parse(java.lang.foreign.MemorySegment.ofArray(b), Path.of("types"));
        assertEquals(
                java.util.List.of(GgmlType.F32, GgmlType.F16, GgmlType.Q8_0, GgmlType.BF16, GgmlType.MXFP4),
                h.tensors().stream().map(GgufTensorInfo::type).toList());
        assertEquals(
                java.util.List.of(24L, 10L, 4L * 34, 14L, 102L),
                h.tensors().stream().map(GgufTensorInfo::byteSize).toList());
        assertEquals("[2, 1, 64]", Arrays.toString(h.tensors().get(2).shape()));
        assertEquals(io.gossgpu.model.DType.MXFP4, h.tensors().get(4).type().dtype());
    }

    @Test
    void version2Loads() throws Exception {
        byte[] b = micro();
        putI32(b, 4, 2);
        try (Checkpoint c = Checkpoint.open(file(b), LoadOptions.defaults())) {
            ModelWeights.of(c);
        }
    }

    @Test
    void badMagicAndVersions() throws Exception {
        byte[] b = micro();
        b[0] = 'X';
        Path f = file(b);
        GossException e = assertThrows(GossException.class, () -> Checkpoint.open(f, LoadOptions.defaults()));
        assertTrue(e.getMessage().contains("GGUF"), e.getMessage());
        assertThrows(ModelFormatException.class, () -> GgufParser.parse(java.lang.foreign.MemorySegment.ofArray(b), f));
        byte[] v1 = micro();
        putI32(v1, 4, 1);
        rejects(v1, "version 1 is not supported");
        byte[] be = micro();
        putI32(be, 4, Integer.reverseBytes(3));
        rejects(be, "big-endian");
        byte[] v9 = micro();
        putI32(v9, 4, 9);
        rejects(v9, "unsupported GGUF version 9");
        rejects(new byte[] {'G', 'G', 'U', 'F'}, "truncated");
    }

    @Test
    void truncatedAnywhere() throws Exception {
        byte[] b = micro();
        int kv = indexOf(b, "general.architecture");
        int tensorInfo = indexOf(b, "token_embd.weight");
        for (int cut : new int[] {10, 20, kv + 3, kv + 30, tensorInfo + 5, tensorInfo + 25})
            rejects(Arrays.copyOf(b, cut), "truncated");
        rejects(Arrays.copyOf(b, b.length - 1), "output.weight", "runs past the end");
    }

    @Test
    void absurdCountsAndLengthsAreRejectedWithoutAllocating() throws Exception {
        byte[] t = micro();
        putI64(t, 8, 1L << 40);
        rejects(t, "tensor count", "cannot fit");
        byte[] k = micro();
        putI64(k, 16, -1);
        rejects(k, "metadata key/value count");
        byte[] s = micro();
        putI64(s, 24, 1L << 62); // length of the first key
        rejects(s, "runs past the end");
        byte[] a = raw(0, 1)
                .str("a")
                .u32(GgufValueType.ARRAY.id())
                .u32(GgufValueType.UINT8.id())
                .i64(1L << 60)
                .bytes();
        rejects(a, "array length", "cannot fit");
        byte[] deep = raw(0, 1).str("a").u32(GgufValueType.ARRAY.id()).bytes();
        GgufFixtures.Raw r = raw(0, 1).str("a").u32(GgufValueType.ARRAY.id());
        for (int i = 0; i < 20; i++) r.u32(GgufValueType.ARRAY.id()).i64(1);
        rejects(r.bytes(), "nested deeper");
        rejects(deep, "truncated");
    }

    @Test
    void unknownValueTypeAndBadUtf8() throws Exception {
        rejects(raw(0, 1).str("a").u32(13).u8(0).bytes(), "'a'", "unknown value type 13");
        rejects(
                raw(0, 1)
                        .str(new byte[] {'k', (byte) 0xff})
                        .u32(GgufValueType.UINT8.id())
                        .u8(1)
                        .bytes(),
                "not valid UTF-8");
        rejects(
                raw(0, 1)
                        .str("a")
                        .u32(GgufValueType.STRING.id())
                        .str(new byte[] {(byte) 0xc3})
                        .bytes(),
                "'a'",
                "not valid UTF-8");
        rejects(
                raw(1, 0)
                        .tensor(new byte[] {'t', (byte) 0xc0, (byte) 0x80}, new long[] {4}, 0, 0)
                        .data(32, 16)
                        .bytes(),
                "not valid UTF-8");
        rejects(raw(0, 1).str("b").u32(GgufValueType.BOOL.id()).u8(7).bytes(), "bool");
    }

    @Test
    void duplicateKeysAndTensorNames() throws Exception {
        rejects(
                raw(0, 2)
                        .str("a")
                        .u32(GgufValueType.UINT8.id())
                        .u8(1)
                        .str("a")
                        .u32(GgufValueType.UINT8.id())
                        .u8(1)
                        .bytes(),
                "duplicate metadata key 'a'");
        rejects(
                raw(2, 0)
                        .tensor("w", new long[] {4}, 0, 0)
                        .tensor("w", new long[] {4}, 0, 32)
                        .data(32, 64)
                        .bytes(),
                "tensor 'w'",
                "duplicate tensor name");
    }

    @Test
    void badTensorInfos() throws Exception {
        rejects(raw(1, 0).tensor("w", new long[] {}, 0, 0).data(32, 16).bytes(), "tensor 'w'", "0 dimensions");
        rejects(
                raw(1, 0)
                        .tensor("w", new long[] {1, 1, 1, 1, 1}, 0, 0)
                        .data(32, 16)
                        .bytes(),
                "tensor 'w'",
                "5 dimensions");
        rejects(raw(1, 0).tensor("w", new long[] {4, 0}, 0, 0).data(32, 16).bytes(), "tensor 'w'", "dimension 1 is 0");
        rejects(raw(1, 0).tensor("w", new long[] {-4}, 0, 0).data(32, 16).bytes(), "tensor 'w'", "must be positive");
        rejects(
                raw(1, 0)
                        .tensor("w", new long[] {1L << 32, 1L << 32}, 0, 0)
                        .data(32, 16)
                        .bytes(),
                "tensor 'w'",
                "overflows");
        rejects(raw(1, 0).tensor("w", new long[] {1L << 61}, 0, 0).data(32, 16).bytes(), "tensor 'w'", "overflows");
        rejects(
                raw(1, 0).tensor("iq2", new long[] {256}, 16, 0).data(32, 66).bytes(),
                "tensor 'iq2'",
                "unsupported tensor type 16 (IQ2_XXS)");
        rejects(
                raw(1, 0).tensor("q", new long[] {33}, 8, 0).data(32, 64).bytes(),
                "tensor 'q'",
                "not a multiple of the Q8_0 block size");
        rejects(raw(1, 0).tensor("w", new long[] {4}, 0, 8).data(32, 64).bytes(), "tensor 'w'", "alignment 32");
        rejects(raw(1, 0).tensor("w", new long[] {4}, 0, 64).data(32, 64).bytes(), "tensor 'w'", "past the end");
        rejects(raw(1, 0).tensor("w", new long[] {4}, 0, 0).bytes(), "truncated");
        rejects(
                raw(2, 0)
                        .tensor("a", new long[] {16}, 0, 0)
                        .tensor("b", new long[] {4}, 0, 32)
                        .data(32, 128)
                        .bytes(),
                "overlaps");
    }

    @Test
    void alignmentMustBeAPowerOfTwo() throws Exception {
        rejects(
                raw(0, 1)
                        .str("general.alignment")
                        .u32(GgufValueType.UINT32.id())
                        .u32(24)
                        .bytes(),
                "power of two, got 24");
        rejects(
                raw(0, 1)
                        .str("general.alignment")
                        .u32(GgufValueType.UINT32.id())
                        .u32(0)
                        .bytes(),
                "power of two, got 0");
        rejects(
                raw(0, 1)
                        .str("general.alignment")
                        .u32(GgufValueType.STRING.id())
                        .str("32")
                        .bytes(),
                "must be an integer");
    }

    @Test
    void metadataProblems() throws Exception {
        byte[] b = micro();
        b[indexOf(b, "gpt-oss.block_count") + "gpt-oss.block_coun".length()] = 'X';
        rejects(b, "missing required metadata key 'gpt-oss.block_count'");
        byte[] t = micro();
        int at = indexOf(t, "gpt-oss.rope.freq_base") + "gpt-oss.rope.freq_base".length();
        putI32(t, at, GgufValueType.INT32.id()); // same width, wrong kind: an int read as the float key is fine...
        putI32(t, at, GgufValueType.STRING.id() + 100); // ...an unknown type is not
        rejects(t, "unknown value type 108");
    }

    @Test
    void wrongArchitectureAndMissingOrUnexpectedTensors() throws Exception {
        byte[] b = micro();
        int at = indexOf(b, "general.architecture") + "general.architecture".length() + 4 + 8;
        assertEquals("gpt-oss", new String(b, at, 7, StandardCharsets.UTF_8));
        b[at + 6] = 'X';
        rejects(b, "architecture 'gpt-osX' is not gpt-oss");
        byte[] m = micro();
        m[indexOf(m, "blk.1.attn_sinks.weight") + 4] = '7';
        rejects(m, "blk.1.attn_sinks.weight", "missing");
        byte[] missingEmbd = micro();
        missingEmbd[indexOf(missingEmbd, "token_embd.weight")] = 'T';
        rejects(missingEmbd, "token_embd.weight");
        byte[] big = micro();
        putI32(big, indexOf(big, "gpt-oss.block_count") + "gpt-oss.block_count".length() + 4, Integer.MAX_VALUE);
        rejects(big, "block_count");
        byte[] wrongShape = micro();
        putI32(
                wrongShape,
                indexOf(wrongShape, "gpt-oss.embedding_length") + "gpt-oss.embedding_length".length() + 4,
                96);
        rejects(
                wrongShape,
                "tensor 'blk.0.attn_q.weight': has shape [32, 64], expected [32, 96] from the GGUF metadata: "
                        + "num_attention_heads 4·head_dim 8, hidden_size 96");
    }

    /** A transposed matrix said "invalid view (…)" with no file and no expected shape. */
    @Test
    void aTransposedTensorNamesTheFileTheTensorAndBothShapes() throws Exception {
        byte[] b = micro();
        int at = indexOf(b, "blk.1.attn_q.weight") + "blk.1.attn_q.weight".length();
        assertEquals(
                2,
                java.nio.ByteBuffer.wrap(b)
                        .order(java.nio.ByteOrder.LITTLE_ENDIAN)
                        .getInt(at),
                "n_dims");
        putI64(b, at + 4, 32); // ne[0] (input features) 64 -> 32
        putI64(b, at + 12, 64); // ne[1] (output features) 32 -> 64
        rejects(
                b,
                ": tensor 'blk.1.attn_q.weight': has shape [64, 32] (transposed?), expected [32, 64] from the GGUF metadata: "
                        + "num_attention_heads 4·head_dim 8, hidden_size 64");
    }

    /** Without attention.key_length, head_dim was guessed (embedding_length / head_count) and the error named the guess. */
    @Test
    void missingHeadMetadataIsNamedNotGuessed() throws Exception {
        for (String key : new String[] {"gpt-oss.attention.key_length", "gpt-oss.attention.head_count_kv"}) {
            byte[] b = micro();
            b[indexOf(b, key) + key.length() - 1] = 'X';
            rejects(b, "missing required metadata key '" + key + "'");
        }
    }
}
