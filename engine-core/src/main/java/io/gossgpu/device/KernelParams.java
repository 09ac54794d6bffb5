package io.gossgpu.device;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * A kernel's scalar arguments as one value: a record that mirrors the kernel's params struct, declared once beside
 * the kernel in its source file ({@code struct NormParams { uint n; float eps; };}). Every GPU API passes a kernel
 * its buffers one by one and then this struct by value (CUDA a by-value parameter, OpenCL {@code clSetKernelArg}
 * with the struct's bytes, Metal {@code setBytes}), so a launch names its values instead of counting positions.
 *
 * <p>The record has the struct's name, and its components are the struct's fields in order with the same names:
 * {@code int} for a C {@code int}/{@code uint}, {@code long} for a 64-bit integer, {@code float} for {@code float}.
 * The layout is C's: each field at the next multiple of its size, the struct padded to its largest field. Each
 * backend's tests check its records against the kernel sources (engine-core's test {@code KernelParamsCheck}).
 */
public interface KernelParams {

    /** The C layout of a params record's struct (computed once per class). */
    static StructLayout layout(Class<? extends KernelParams> type) {
        return ParamsMirror.of(type).layout;
    }

    /** This value's bytes in C layout, written at the start of {@code dst}; returns the slice written. */
    default MemorySegment writeTo(MemorySegment dst) {
        ParamsMirror m = ParamsMirror.of(getClass());
        MemorySegment out = dst.asSlice(0, m.layout.byteSize()).fill((byte) 0); // padding too, so equal values give equal bytes
        try {
            for (int i = 0; i < m.getters.length; i++) {
                Object v = m.getters[i].invoke(this);
                switch (v) {
                    case Integer x -> dst.set(ValueLayout.JAVA_INT_UNALIGNED, m.offsets[i], x);
                    case Long x -> dst.set(ValueLayout.JAVA_LONG_UNALIGNED, m.offsets[i], x);
                    case Float x -> dst.set(ValueLayout.JAVA_FLOAT_UNALIGNED, m.offsets[i], x);
                    default -> throw new IllegalStateException(v.getClass() + " in " + getClass());
                }
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    /** The struct's size in bytes. */
    default long byteSize() {
        return ParamsMirror.of(getClass()).layout.byteSize();
    }
}
