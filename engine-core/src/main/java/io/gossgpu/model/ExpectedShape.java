package io.gossgpu.model;

import java.util.Arrays;

/**
 * The shape a file tensor must have, worked out from the config, checked before any view of it is made: a wrong
 * shape is one line naming the file, the tensor as the file calls it, its shape, the expected shape and the config
 * values that give each expected dimension. Leading dimensions of size 1 beyond the expected rank are tolerated
 * ({@code [1, H]} for a vector), as the views read them the same.
 */
final class ExpectedShape {
    /** One expected dimension and how the config makes it, e.g. {@code hidden_size 2880}. */
    record Dim(long size, String from) {
        static Dim of(String key, int value) {
            return new Dim(value, key + " " + value);
        }

        /** This dimension counted in 32-value MXFP4 blocks. */
        Dim blocks() {
            return new Dim(size / ModelConfig.MXFP4_BLOCK, from + "/" + ModelConfig.MXFP4_BLOCK);
        }
    }

    /** The 16 code bytes of one MXFP4 block (OpenAI's {@code .blocks} tensors). */
    static final Dim BLOCK_BYTES = new Dim(16, "16 bytes per MXFP4 block");

    /** The dimensions of a gpt-oss model, each with the config keys it comes from. */
    record Dims(Dim hidden, Dim vocab, Dim heads, Dim q, Dim kv, Dim qkv, Dim experts, Dim intermediate, Dim gateUp) {
        static Dims of(ModelConfig c) {
            String hd = "head_dim " + c.headDim();
            return new Dims(
                    Dim.of("hidden_size", c.hiddenSize()),
                    Dim.of("vocab_size", c.vocabSize()),
                    Dim.of("num_attention_heads", c.numAttentionHeads()),
                    new Dim(c.qDim(), "num_attention_heads " + c.numAttentionHeads() + "·" + hd),
                    new Dim(c.kvDim(), "num_key_value_heads " + c.numKeyValueHeads() + "·" + hd),
                    new Dim(
                            c.qkvDim(),
                            "(num_attention_heads " + c.numAttentionHeads() + " + 2·num_key_value_heads "
                                    + c.numKeyValueHeads() + ")·" + hd),
                    Dim.of("num_experts", c.numExperts()),
                    Dim.of("intermediate_size", c.intermediateSize()),
                    new Dim(2L * c.intermediateSize(), "2·intermediate_size " + c.intermediateSize()));
        }
    }

    private ExpectedShape() {}

    /**
     * Throws a {@link ModelFormatException} unless {@code t} has the shape {@code dims}.
     *
     * @param configSource where the config was read, for the message ({@code config.json}, the GGUF metadata)
     */
    static TensorData check(TensorData t, String configSource, Dim... dims) {
        long[] want = Arrays.stream(dims).mapToLong(Dim::size).toArray();
        if (matches(t.shape(), want)) return t;
        String[] from = Arrays.stream(dims).map(Dim::from).toArray(String[]::new);
        long[] reversed = t.shape().clone();
        for (int i = 0; i < reversed.length / 2; i++) {
            long x = reversed[i];
            reversed[i] = reversed[reversed.length - 1 - i];
            reversed[reversed.length - 1 - i] = x;
        }
        String hint = want.length > 1 && Arrays.equals(reversed, want) ? " (transposed?)" : "";
        throw new ModelFormatException(
                t.file(),
                t.name(),
                "has shape " + t.shapeString() + hint + ", expected " + Arrays.toString(want) + " from " + configSource
                        + ": " + String.join(", ", from));
    }

    private static boolean matches(long[] actual, long[] want) {
        int extra = actual.length - want.length;
        if (extra < 0) return false;
        for (int i = 0; i < extra; i++) if (actual[i] != 1) return false;
        return Arrays.equals(actual, extra, actual.length, want, 0, want.length);
    }
}
