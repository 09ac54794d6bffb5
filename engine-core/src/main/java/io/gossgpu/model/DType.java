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
    MXFP4(32, 17);

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
