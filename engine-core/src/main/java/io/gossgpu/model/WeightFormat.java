package io.gossgpu.model;

/** How the numbers of a {@link WeightView} are stored. */
public enum WeightFormat {
    F32(4),
    F16(2),
    BF16(2),
    /** ggml block_q8_0 (34 bytes per 32 values). */
    Q8_0(0),
    /** ggml block_mxfp4 (17 bytes per 32 values, scale inline). */
    MXFP4_GGML(0),
    /** OpenAI checkpoint MXFP4: 16 bytes of codes per 32 values, scales in a separate tensor. */
    MXFP4_OPENAI(0);

    private final int elementBytes;

    WeightFormat(int elementBytes) {
        this.elementBytes = elementBytes;
    }

    /** Bytes per element of a dense format; 0 for block formats. */
    public int elementBytes() {
        return elementBytes;
    }

    public boolean isDense() {
        return elementBytes > 0;
    }

    /** Bytes holding one row of {@code cols} values (codes only, for {@link #MXFP4_OPENAI}). */
    public long rowBytes(int cols) {
        return switch (this) {
            case F32, F16, BF16 -> (long) cols * elementBytes;
            case Q8_0 -> (long) cols / 32 * 34;
            case MXFP4_GGML -> (long) cols / 32 * 17;
            case MXFP4_OPENAI -> cols / 2;
        };
    }

    public static WeightFormat of(DType dtype) {
        return switch (dtype) {
            case F32 -> F32;
            case F16 -> F16;
            case BF16 -> BF16;
            case Q8_0 -> Q8_0;
            case MXFP4 -> MXFP4_GGML;
            default -> throw new IllegalArgumentException("not a weight type: " + dtype);
        };
    }
}
