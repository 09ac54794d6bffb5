package io.gossgpu.testmodel;

import io.gossgpu.model.DType;
import java.util.Arrays;

/** Name, element type and shape (outermost first) of one tensor a generator produces. */
public record TensorSpec(String name, DType dtype, long[] shape) {
    public long elements() {
        long n = 1;
        for (long d : shape) n *= d;
        return n;
    }

    public long byteSize() {
        return dtype.rowBytes(elements());
    }

    @Override
    public String toString() {
        return name + " " + dtype + Arrays.toString(shape);
    }
}
