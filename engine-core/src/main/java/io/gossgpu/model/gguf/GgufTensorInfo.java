package io.gossgpu.model.gguf;

/**
 * One tensor's entry in a GGUF header.
 *
 * @param ne       dimensions in GGUF order: {@code ne[0]} is the contiguous one
 * @param offset   byte offset from the start of the data section
 * @param byteSize bytes the tensor's data takes
 */
record GgufTensorInfo(String name, long[] ne, GgmlType type, long offset, long byteSize) {

    /** The shape outermost-first, as {@link io.gossgpu.model.TensorData} holds it. */
    long[] shape() {
        long[] s = new long[ne.length];
        for (int i = 0; i < ne.length; i++) s[i] = ne[ne.length - 1 - i];
        return s;
    }
}
