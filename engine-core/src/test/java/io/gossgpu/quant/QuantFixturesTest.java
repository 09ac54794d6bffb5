package io.gossgpu.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.gossgpu.model.BlockDecoder;
import io.gossgpu.model.DType;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every ggml block type goss-gpu decodes, against llama.cpp's gguf-py on random blocks whose scales include zero,
 * negative, subnormal and the largest F16 values (fixtures written by scripts/quant-fixtures.py): bit for bit.
 * The random bytes cover every bit of every layout: Q4_K/Q5_K's packed 6-bit scales and mins, Q3_K's split 6-bit
 * scales and high-bit mask, Q6_K's high bits and signed scales, Q2_K's nibble scale/min pairs, the 5-bit types'
 * high-bit words, IQ4_XS's split scales, each over whole 256-value super-blocks.
 */
class QuantFixturesTest {
    @ParameterizedTest
    @EnumSource(
            value = DType.class,
            names = {
                "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS",
                "MXFP4"
            })
    void decodesExactlyAsGgufPy(DType type) throws IOException {
        byte[] blocks = resource(type + ".blocks");
        float[] expected = floats(resource(type + ".f32"));
        int n = blocks.length / type.blockBytes() * type.blockSize();
        assertEquals(expected.length, n, "fixture sizes");
        float[] got = new float[n];
        MemorySegment seg = MemorySegment.ofArray(blocks);
        switch (type) {
            case Q8_0 -> Q8_0.decodeRow(seg, 0, n, got, 0);
            case MXFP4 -> Mxfp4.decodeGgmlRow(seg, 0, n, got, 0);
            default -> BlockDecoder.of(type).decodeRow(seg, 0, n, got, 0);
        }
        for (int i = 0; i < n; i++)
            assertEquals(
                    bits(expected[i]),
                    bits(got[i]),
                    type + " value " + i + " (block " + i / type.blockSize() + "): gguf-py " + expected[i]
                            + ", goss-gpu " + got[i]);
    }

    /** The float's bits, zeros as +0: gguf-py reads MXFP4 code 8 through an integer table as +0, goss-gpu as FP4's −0. */
    private static int bits(float f) {
        return f == 0 ? 0 : Float.floatToRawIntBits(f);
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = QuantFixturesTest.class.getResourceAsStream("/quant-fixtures/" + name)) {
            assertNotNull(in, "missing fixture " + name);
            return in.readAllBytes();
        }
    }

    private static float[] floats(byte[] b) {
        float[] f = new float[b.length / 4];
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(f);
        return f;
    }
}
