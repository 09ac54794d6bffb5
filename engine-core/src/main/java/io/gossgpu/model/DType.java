package io.gossgpu.model;

/**
 * Element types of tensors in model files. Block types store {@link #blockSize()} elements in
 * {@link #blockBytes()} bytes.
 */
public enum DType {
    F32(1, 4),
    F16(1, 2),
    BF16(1, 2),
    U8(1, 1),
    I32(1, 4),
    /** ggml block_q8_0: one F16 scale then 32 int8 values. */
    Q8_0(32, 34),
    /** ggml block_mxfp4: one E8M0 scale byte then 16 bytes; low nibbles are elements 0..15, high 16..31. */
    MXFP4(32, 17),
    /**
     * Ollama's first gpt-oss MXFP4 (its type id 4, before it adopted ggml's layout): one E8M0 scale byte then
     * 16 bytes in OpenAI's nibble order (byte j holds elements 2j and 2j+1). Repacked at load.
     */
    MXFP4_OLLAMA(32, 17),
    // ggml's other quantized types (ggml-common.h); decoded at load into a type the backends run.
    Q4_0(32, 18),
    Q4_1(32, 20),
    Q5_0(32, 22),
    Q5_1(32, 24),
    Q2_K(256, 84),
    Q3_K(256, 110),
    Q4_K(256, 144),
    Q5_K(256, 176),
    Q6_K(256, 210),
    IQ4_NL(32, 18),
    IQ4_XS(256, 136);

    private final int blockSize;
    private final int blockBytes;

    DType(int blockSize, int blockBytes) {
        this.blockSize = blockSize;
        this.blockBytes = blockBytes;
    }

    public int blockSize() {
        return blockSize;
    }

    public int blockBytes() {
        return blockBytes;
    }

    public boolean isBlockQuantized() {
        return blockSize > 1;
    }

    /** Bytes of a row of {@code elements} values; -1 when a block type's row is not whole blocks. */
    public long rowBytes(long elements) {
        if (elements % blockSize != 0) return -1;
        return Math.multiplyExact(elements / blockSize, (long) blockBytes);
    }
}
