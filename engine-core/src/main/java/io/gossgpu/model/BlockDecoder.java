package io.gossgpu.model;

import io.gossgpu.quant.Iq4;
import io.gossgpu.quant.KQuants;
import io.gossgpu.quant.LegacyQuants;
import io.gossgpu.quant.Mxfp4;
import java.lang.foreign.MemorySegment;

/** Decodes a row of {@code n} values of one ggml block type into floats, exactly as ggml does. */
@FunctionalInterface
public interface BlockDecoder {
    void decodeRow(MemorySegment data, long offset, int n, float[] out, int outOffset);

    /** The decoder of {@code type}, or null for a type the backends read as it is (or none can decode). */
    static BlockDecoder of(DType type) {
        return switch (type) {
            case Q4_0 -> LegacyQuants::decodeQ4_0;
            case Q4_1 -> LegacyQuants::decodeQ4_1;
            case Q5_0 -> LegacyQuants::decodeQ5_0;
            case Q5_1 -> LegacyQuants::decodeQ5_1;
            case Q2_K -> KQuants::decodeQ2_K;
            case Q3_K -> KQuants::decodeQ3_K;
            case Q4_K -> KQuants::decodeQ4_K;
            case Q5_K -> KQuants::decodeQ5_K;
            case Q6_K -> KQuants::decodeQ6_K;
            case IQ4_NL -> Iq4::decodeNl;
            case IQ4_XS -> Iq4::decodeXs;
            case MXFP4_OLLAMA -> Mxfp4::decodeOllamaRow;
            default -> null;
        };
    }
}
