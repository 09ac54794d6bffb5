package io.gossgpu.model;

import io.gossgpu.quant.LE;
import io.gossgpu.quant.Mxfp4;
import io.gossgpu.quant.Q8_0;
import java.lang.foreign.MemorySegment;

/**
 * {@code --check-tensors}, as llama.cpp has it: reads every byte of every tensor once and fails on the first
 * value that is NaN or infinite (F32, F16, BF16, the F16 scales of Q8_0 and the other ggml block types) or an MXFP4 scale byte of 255, which the
 * OCP MX format reserves for NaN. Reports its progress as bytes scanned of the model's total.
 */
public final class TensorCheck {
    /** Bytes between progress reports. */
    private static final long STEP = 64L << 20;

    private TensorCheck() {}

    public static void run(Checkpoint ckpt, LoadOptions.Progress progress) {
        long total = 0, done = 0, reported = 0;
        for (TensorData t : ckpt.tensors().values()) total += t.bytes().byteSize();
        for (TensorData t : ckpt.tensors().values()) {
            check(t);
            done += t.bytes().byteSize();
            if (done - reported >= STEP || done == total) {
                progress.read(ckpt.path(), done, total);
                reported = done;
            }
        }
    }

    static void check(TensorData t) {
        MemorySegment b = t.bytes();
        long n = b.byteSize();
        switch (t.dtype()) {
            case F32 -> {
                for (long i = 0; i < n; i += 4)
                    if ((b.get(LE.I32, i) & 0x7f800000) == 0x7f800000)
                        bad(t, i / 4, Float.intBitsToFloat(b.get(LE.I32, i)));
            }
            case BF16 -> {
                for (long i = 0; i < n; i += 2)
                    if ((b.get(LE.I16, i) & 0x7f80) == 0x7f80)
                        bad(t, i / 2, io.gossgpu.quant.Bf16.toFloat(b.get(LE.I16, i)));
            }
            case F16 -> {
                for (long i = 0; i < n; i += 2)
                    if ((b.get(LE.I16, i) & 0x7c00) == 0x7c00)
                        bad(t, i / 2, io.gossgpu.quant.F16.toFloat(b.get(LE.I16, i)));
            }
            case Q8_0 -> {
                for (long i = 0; i < n; i += Q8_0.BLOCK_BYTES)
                    if ((b.get(LE.I16, i) & 0x7c00) == 0x7c00)
                        badScale(
                                t, i / Q8_0.BLOCK_BYTES, "F16 scale " + io.gossgpu.quant.F16.toFloat(b.get(LE.I16, i)));
            }
            case MXFP4 -> {
                for (long i = 0; i < n; i += Mxfp4.GGML_BLOCK_BYTES)
                    if ((b.get(LE.U8, i) & 0xff) == 0xff)
                        badScale(t, i / Mxfp4.GGML_BLOCK_BYTES, "E8M0 scale byte 255 (NaN)");
            }
            case MXFP4_OLLAMA -> {
                for (long i = 0; i < n; i += Mxfp4.GGML_BLOCK_BYTES)
                    if ((b.get(LE.U8, i) & 0xff) == 0xff)
                        badScale(t, i / Mxfp4.GGML_BLOCK_BYTES, "E8M0 scale byte 255 (NaN)");
            }
            case Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS -> {
                int size = t.dtype().blockBytes();
                for (long block = 0; block < n; block += size)
                    for (int at : f16Fields(t.dtype()))
                        if ((b.get(LE.I16, block + at) & 0x7c00) == 0x7c00)
                            badScale(
                                    t,
                                    block / size,
                                    "F16 scale " + io.gossgpu.quant.F16.toFloat(b.get(LE.I16, block + at)));
            }
            case U8 -> {
                if (!t.name().endsWith("scales")) return; // OpenAI MXFP4: codes (any byte is valid) and scales
                for (long i = 0; i < n; i++)
                    if ((b.get(LE.U8, i) & 0xff) == 0xff) badScale(t, i, "E8M0 scale byte 255 (NaN)");
            }
            default -> {}
        }
    }

    /** Byte offsets of a block's F16 scales and mins (ggml-common.h's block structs). */
    private static int[] f16Fields(DType d) {
        return switch (d) {
            case Q4_0, Q5_0, IQ4_NL, IQ4_XS -> new int[] {0};
            case Q4_1, Q5_1, Q4_K, Q5_K -> new int[] {0, 2};
            case Q2_K -> new int[] {80, 82};
            case Q3_K -> new int[] {108};
            case Q6_K -> new int[] {208};
            default -> new int[0];
        };
    }

    private static void bad(TensorData t, long index, float value) {
        throw new ModelFormatException(t.file(), t.name(), "value " + index + " is " + value + " (--check-tensors)");
    }

    private static void badScale(TensorData t, long block, String what) {
        throw new ModelFormatException(t.file(), t.name(), "block " + block + " has " + what + " (--check-tensors)");
    }
}
