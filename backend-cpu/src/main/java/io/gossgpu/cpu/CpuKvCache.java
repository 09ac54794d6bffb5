package io.gossgpu.cpu;

import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.KvType;
import java.lang.foreign.MemorySegment;

/**
 * The cpu backend's KV cache: per layer, keys and values of {@code spec.slots(layer)} positions, in Java arrays of the
 * spec's {@link KvType}.
 *
 * <p>Keys in blocks of 16 slots, transposed within a block so that one vector holds 16 positions of one channel: key
 * {@code c} of slot {@code s} at {@code ((s >> 4)·kvDim + c)·16 + (s & 15)}. Values row-major: {@code [slot·kvDim + c]}.
 * Each number is held as its type says, and reads back as {@link KvType#round} gives it:
 *
 * <ul>
 *   <li>F32: {@code float[]} ({@link #keys}, {@link #values}).
 *   <li>F16, BF16: the 16 bits in {@code short[]} ({@link #halfKeys}, {@link #halfValues}): {@code x = half(h)} or
 *       {@code x = float(b << 16)}.
 *   <li>Q8_0: the int8 quants in {@code byte[]} ({@link #quantKeys}, {@link #quantValues}) in the layouts above, and
 *       one F16 scale per block of 32 channels of a row (blocks counted from channel 0) in {@code short[]}: a key's
 *       in the keys' 16-slot blocks, block {@code b} of slot {@code s} at {@code ((s >> 4)·nb + b)·16 + (s & 15)}
 *       ({@link #keyScales}), a value's row-major at {@code s·nb + b} ({@link #valueScales}); {@code nb =
 *       ceil(kvDim / 32)}; {@code x = q · half(dh)}.
 * </ul>
 *
 * Storing encodes a row by the formulas of {@link KvType} ({@link #store}); rows already rounded (as the attention
 * rounds a batch's rows before it attends to them) encode exactly. Arrays of the other types are null.
 */
final class CpuKvCache implements KvCache {
    final KvCacheSpec spec;
    final KvType type;
    /** Numbers per row, Q8_0 blocks per row, bytes of one number in the key and value arrays. */
    final int kvDim, blocks, elementBytes;

    final float[][] keys, values;
    final short[][] halfKeys, halfValues;
    final byte[][] quantKeys, quantValues;
    final short[][] keyScales, valueScales;

    CpuKvCache(KvCacheSpec spec) {
        this.spec = spec;
        this.type = spec.type();
        this.kvDim = spec.config().kvDim();
        this.blocks = KvType.q8Blocks(kvDim);
        this.elementBytes = switch (type) {
            case F32 -> 4;
            case F16, BF16 -> 2;
            case Q8_0 -> 1;
        };
        int layers = spec.config().numHiddenLayers();
        boolean f32 = type == KvType.F32, half = type == KvType.F16 || type == KvType.BF16, q8 = type == KvType.Q8_0;
        keys = f32 ? new float[layers][] : null;
        values = f32 ? new float[layers][] : null;
        halfKeys = half ? new short[layers][] : null;
        halfValues = half ? new short[layers][] : null;
        quantKeys = q8 ? new byte[layers][] : null;
        quantValues = q8 ? new byte[layers][] : null;
        keyScales = q8 ? new short[layers][] : null;
        valueScales = q8 ? new short[layers][] : null;
        for (int l = 0; l < layers; l++) {
            int slots = spec.slots(l), padded = (slots + 15) & ~15;
            int keyCount = Math.multiplyExact(padded, kvDim), valueCount = Math.multiplyExact(slots, kvDim);
            switch (type) {
                case F32 -> {
                    keys[l] = new float[keyCount];
                    values[l] = new float[valueCount];
                }
                case F16, BF16 -> {
                    halfKeys[l] = new short[keyCount];
                    halfValues[l] = new short[valueCount];
                }
                case Q8_0 -> {
                    quantKeys[l] = new byte[keyCount];
                    quantValues[l] = new byte[valueCount];
                    keyScales[l] = new short[Math.multiplyExact(padded, blocks)];
                    valueScales[l] = new short[Math.multiplyExact(slots, blocks)];
                }
            }
        }
    }

    /** Layer {@code l}'s keys as a segment (of the array of this cache's type). */
    MemorySegment keySegment(int l) {
        return switch (type) {
            case F32 -> MemorySegment.ofArray(keys[l]);
            case F16, BF16 -> MemorySegment.ofArray(halfKeys[l]);
            case Q8_0 -> MemorySegment.ofArray(quantKeys[l]);
        };
    }

    /** Layer {@code l}'s values as a segment (of the array of this cache's type). */
    MemorySegment valueSegment(int l) {
        return switch (type) {
            case F32 -> MemorySegment.ofArray(values[l]);
            case F16, BF16 -> MemorySegment.ofArray(halfValues[l]);
            case Q8_0 -> MemorySegment.ofArray(quantValues[l]);
        };
    }

    /** Layer {@code l}'s Q8_0 key scales as a segment; {@link MemorySegment#NULL} for the other types. */
    MemorySegment keyScaleSegment(int l) {
        return type == KvType.Q8_0 ? MemorySegment.ofArray(keyScales[l]) : MemorySegment.NULL;
    }

    /** Layer {@code l}'s Q8_0 value scales as a segment; {@link MemorySegment#NULL} for the other types. */
    MemorySegment valueScaleSegment(int l) {
        return type == KvType.Q8_0 ? MemorySegment.ofArray(valueScales[l]) : MemorySegment.NULL;
    }

    /**
     * Stores one position of layer {@code l} into {@code slot}: the key row {@code k[kOff .. kOff + kvDim)} and the value
     * row {@code v[vOff ..]}, each number encoded as this cache's type.
     */
    void store(int l, int slot, float[] k, int kOff, float[] v, int vOff) {
        int kb = (slot >> 4) * kvDim * 16 + (slot & 15), vb = slot * kvDim;
        switch (type) {
            case F32 -> {
                float[] ck = keys[l];
                for (int c = 0; c < kvDim; c++) ck[kb + c * 16] = k[kOff + c];
                System.arraycopy(v, vOff, values[l], vb, kvDim);
            }
            case F16 -> {
                short[] ck = halfKeys[l], cv = halfValues[l];
                for (int c = 0; c < kvDim; c++) ck[kb + c * 16] = Float.floatToFloat16(k[kOff + c]);
                for (int c = 0; c < kvDim; c++) cv[vb + c] = Float.floatToFloat16(v[vOff + c]);
            }
            case BF16 -> {
                short[] ck = halfKeys[l], cv = halfValues[l];
                for (int c = 0; c < kvDim; c++) ck[kb + c * 16] = (short) KvType.bf16Bits(k[kOff + c]);
                for (int c = 0; c < kvDim; c++) cv[vb + c] = (short) KvType.bf16Bits(v[vOff + c]);
            }
            case Q8_0 -> {
                byte[] qk = quantKeys[l], qv = quantValues[l];
                short[] sk = keyScales[l], sv = valueScales[l];
                int sb = (slot >> 4) * blocks * 16 + (slot & 15);
                for (int b = 0; b < blocks; b++) {
                    int from = b * KvType.Q8_BLOCK, to = Math.min(kvDim, from + KvType.Q8_BLOCK);
                    // d = amax / 127 (unrounded) picks the quants, f16(d) is the stored scale: KvType.round's formula
                    float d = KvType.q8Scale(k, kOff + from, kOff + to);
                    sk[sb + b * 16] = Float.floatToFloat16(d);
                    for (int c = from; c < to; c++) qk[kb + c * 16] = (byte) KvType.q8Quant(k[kOff + c], d);
                    d = KvType.q8Scale(v, vOff + from, vOff + to);
                    sv[slot * blocks + b] = Float.floatToFloat16(d);
                    for (int c = from; c < to; c++) qv[vb + c] = (byte) KvType.q8Quant(v[vOff + c], d);
                }
            }
        }
    }

    /**
     * Decodes the keys of channels {@code chan .. chan + hd − 1} of the 16-slot key blocks {@code b0 .. b1 − 1} of layer
     * {@code l} into {@code dst} in the same transposed layout for rows of {@code hd} channels: (slot {@code s},
     * channel {@code chan + c}) at {@code dst[((s >> 4) − b0)·hd·16 + c·16 + (s & 15)]}. Every number as it reads back.
     */
    void decodeKeys(int l, int b0, int b1, int chan, int hd, float[] dst) {
        int n = hd * 16;
        for (int b = b0; b < b1; b++) {
            int src = (b * kvDim + chan) * 16, at = (b - b0) * n;
            switch (type) {
                case F32 -> System.arraycopy(keys[l], src, dst, at, n);
                case F16 -> {
                    short[] h = halfKeys[l];
                    for (int i = 0; i < n; i++) dst[at + i] = Float.float16ToFloat(h[src + i]);
                }
                case BF16 -> {
                    short[] h = halfKeys[l];
                    for (int i = 0; i < n; i++) dst[at + i] = Float.intBitsToFloat(h[src + i] << 16);
                }
                case Q8_0 -> {
                    byte[] q = quantKeys[l];
                    short[] s = keyScales[l];
                    for (int c = 0; c < hd; c++) {
                        int sc = (b * blocks + ((chan + c) >> 5)) * 16;
                        for (int lane = 0; lane < 16; lane++)
                            dst[at + c * 16 + lane] = q[src + c * 16 + lane] * Float.float16ToFloat(s[sc + lane]);
                    }
                }
            }
        }
    }

    /**
     * Decodes channels {@code chan .. chan + hd − 1} of the values of slots {@code s0 .. s0 + n − 1} of layer {@code l}
     * into rows of {@code hd}: {@code dst[(s − s0)·hd + c]}. Every number as it reads back.
     */
    void decodeValues(int l, int s0, int n, int chan, int hd, float[] dst) {
        for (int j = 0; j < n; j++) {
            int src = (s0 + j) * kvDim + chan, at = j * hd;
            switch (type) {
                case F32 -> System.arraycopy(values[l], src, dst, at, hd);
                case F16 -> {
                    short[] h = halfValues[l];
                    for (int c = 0; c < hd; c++) dst[at + c] = Float.float16ToFloat(h[src + c]);
                }
                case BF16 -> {
                    short[] h = halfValues[l];
                    for (int c = 0; c < hd; c++) dst[at + c] = Float.intBitsToFloat(h[src + c] << 16);
                }
                case Q8_0 -> {
                    byte[] q = quantValues[l];
                    short[] s = valueScales[l];
                    int sr = (s0 + j) * blocks;
                    for (int c = 0; c < hd; c++)
                        dst[at + c] = q[src + c] * Float.float16ToFloat(s[sr + ((chan + c) >> 5)]);
                }
            }
        }
    }

    @Override
    public KvCacheSpec spec() {
        return spec;
    }

    @Override
    public void close() {}
}
