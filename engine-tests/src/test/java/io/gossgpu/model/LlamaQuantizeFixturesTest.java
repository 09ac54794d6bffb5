package io.gossgpu.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gossgpu.debug.LogitsDump;
import io.gossgpu.reference.ReferenceBackend;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Files quantized by llama.cpp's own llama-quantize (scripts/llama-quantize-fixtures.sh: a --preset quant model as
 * Q4_K_M, Q6_K, Q5_0 and Q2_K, experts kept MXFP4), which hold Q2_K, Q3_K, Q4_K, Q6_K, Q4_0, Q5_0, Q8_0, F32 and MXFP4
 * tensors: every tensor decodes to gguf-py's floats bit for bit (SHA-256 of the float32 values), and the model gives
 * the reference backend's logits of the same model built from those floats as F32 tensors: bit-identical with
 * {@link LoadOptions#exactDense()}, within F16 rounding with the default decoding.
 */
class LlamaQuantizeFixturesTest {
    private static final int[] TOKENS = {1, 5, 17, 63, 2, 40, 33, 8};

    @TempDir
    Path tmp;

    @ParameterizedTest
    @ValueSource(strings = {"Q4_K_M", "Q6_K", "Q5_0", "Q2_K"})
    void decodesAsGgufPyAndGivesTheDequantizedModelsLogits(String ftype) throws Exception {
        Path file = Path.of(getClass()
                .getResource("/llama-quantize/quant-" + ftype + ".gguf")
                .toURI());
        JsonNode expected;
        try (var in = getClass().getResourceAsStream("/llama-quantize/gguf-py-sha256.json")) {
            expected = new ObjectMapper().readTree(in).get(file.getFileName().toString());
        }
        float[] exact, decoded, approx;
        Set<DType> types = new HashSet<>();
        try (Checkpoint q = Checkpoint.open(file, LoadOptions.defaults().withExactDense(true));
                Arena arena = Arena.ofShared()) {
            assertEquals(expected.size(), q.tensors().size());
            Map<String, TensorData> f32 = new LinkedHashMap<>();
            for (TensorData t : q.tensors().values()) {
                types.add(t.dtype());
                JsonNode e = expected.get(t.name());
                assertEquals(e.get("type").asText(), t.dtype().toString(), t.name());
                float[] v = decode(t);
                assertEquals(
                        e.get("sha256").asText(), sha256(v), t.name() + " (" + t.dtype() + ") decodes unlike gguf-py");
                f32.put(t.name(), t.dtype() == DType.MXFP4 ? t : floats(t, v, arena));
            }
            try (Checkpoint dequantized =
                    new Checkpoint(file, ModelFormat.GGUF, q.config(), f32, q.metadata(), Arena.ofShared())) {
                decoded = logits(dequantized);
            }
            exact = logits(q);
        }
        try (Checkpoint q = Checkpoint.open(file, LoadOptions.defaults())) {
            approx = logits(q);
        }
        assertTrue(
                types.stream().anyMatch(Conversions::needsDecode),
                "the fixture holds types that need decoding: " + types);
        assertArrayEquals(decoded, exact, ftype + ": exact decoding gives the F32 model's logits bit for bit");
        double maxDiff = 0, sq = 0;
        for (int i = 0; i < decoded.length; i++) {
            maxDiff = Math.max(maxDiff, Math.abs(decoded[i] - approx[i]));
            sq += decoded[i] * (double) decoded[i];
        }
        double rms = Math.sqrt(sq / decoded.length);
        assertTrue(
                maxDiff < 2e-3 * rms + 1e-6,
                ftype + ": default decoding (Q8_0 exact, F16 otherwise) moves logits by " + maxDiff + " (rms " + rms
                        + ")");
    }

    private int dumps;

    private float[] logits(Checkpoint c) {
        return LogitsDump.write(tmp.resolve("logits" + dumps++), new ReferenceBackend(), ModelWeights.of(c), TOKENS);
    }

    /** Every value of {@code t} by goss-gpu's decoders, zeros as +0. */
    private static float[] decode(TensorData t) {
        float[] out;
        BlockDecoder d = BlockDecoder.of(t.dtype());
        if (d == null) out = WeightView.of(t).dequantizeAll();
        else {
            int cols = (int) t.dim(t.rank() - 1);
            long rows = t.elements() / cols, rowBytes = t.dtype().rowBytes(cols);
            out = new float[(int) t.elements()];
            for (int r = 0; r < rows; r++) d.decodeRow(t.bytes(), r * rowBytes, cols, out, r * cols);
        }
        for (int i = 0; i < out.length; i++) out[i] += 0f;
        return out;
    }

    private static TensorData floats(TensorData t, float[] v, Arena arena) {
        MemorySegment seg = arena.allocate(4L * v.length, 64);
        MemorySegment.copy(v, 0, seg, ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0, v.length);
        return new TensorData(t.name(), DType.F32, t.shape(), seg, t.file());
    }

    private static String sha256(float[] v) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(v);
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b.array()));
    }
}
