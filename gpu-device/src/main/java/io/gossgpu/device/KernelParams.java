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
 * {@code int} for a C {@code int}/{@code uint}, {@code long} for a 64-bit integer, {@code float} and {@code double}
 * for themselves (a double only where the device has it, e.g. OpenCL's cl_khr_fp64 kernels).
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
        MemorySegment out =
                dst.asSlice(0, m.layout.byteSize()).fill((byte) 0); // padding too, so equal values give equal bytes
        try { // typed invokeExact: no boxing, so a launch allocates nothing here
            for (int i = 0; i < m.getters.length; i++) {
                Class<?> t = m.types[i];
                if (t == int.class)
                    out.set(ValueLayout.JAVA_INT_UNALIGNED, m.offsets[i], (int) m.getters[i].invokeExact(this));
                else if (t == long.class)
                    out.set(ValueLayout.JAVA_LONG_UNALIGNED, m.offsets[i], (long) m.getters[i].invokeExact(this));
                else if (t == float.class)
                    out.set(ValueLayout.JAVA_FLOAT_UNALIGNED, m.offsets[i], (float) m.getters[i].invokeExact(this));
                else out.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, m.offsets[i], (double) m.getters[i].invokeExact(this));
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
