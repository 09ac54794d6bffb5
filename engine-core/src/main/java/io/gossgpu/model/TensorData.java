package io.gossgpu.model;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * One tensor as stored in a file: its name, element type, shape (outermost dimension first, the
 * contiguous one last — GGUF's reversed order is turned around by its reader) and a view of its bytes.
 * The bytes stay where the reader put them (a mapped file, or an arena when loaded fully).
 */
public record TensorData(String name, DType dtype, long[] shape, MemorySegment bytes, Path file) {

    public long elements() {
        long n = 1;
        for (long d : shape) n = Math.multiplyExact(n, d);
        return n;
    }

    public int rank() {
        return shape.length;
    }

    public long dim(int i) {
        return shape[i];
    }

    public String shapeString() {
        return Arrays.toString(shape);
    }

    @Override
    public String toString() {
        return name + " " + dtype + shapeString();
    }
}
