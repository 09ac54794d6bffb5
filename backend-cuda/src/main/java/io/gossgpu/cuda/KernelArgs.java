package io.gossgpu.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The {@code void **kernelParams} array of {@code cuLaunchKernel}, built once and refilled per launch
 * without allocating: {@code args.clear().ptr(x).ptr(scale).ptr(y).i32(n).f32(eps)}.
 *
 * <p>Each argument gets its own 8-byte, 8-aligned slot; {@code kernelParams[i]} points at slot i.
 * The driver reads as many bytes from a slot as the kernel's parameter has (4 for int/float, 8 for
 * pointers, long long and double), so the Java type must match the kernel's C type:
 * {@code int}/{@code unsigned} → {@link #i32}, {@code long long}/{@code size_t} → {@link #i64},
 * {@code float} → {@link #f32}, {@code double} → {@link #f64}, any pointer → {@link #ptr}.
 * The driver copies the values during {@code cuLaunchKernel}, so the object may be refilled right
 * after a launch returns. Not thread-safe: one per launching thread.
 */
public final class KernelArgs {

    /** Most arguments one launch can take. */
    public static final int MAX_ARGS = 32;
    private static final long SLOT = 8;

    private final MemorySegment values;
    private final MemorySegment pointers;
    private int count;

    public KernelArgs() {
        Arena arena = Arena.ofAuto();
        values = arena.allocate(SLOT * MAX_ARGS, SLOT);
        pointers = arena.allocate(ValueLayout.ADDRESS.byteSize() * MAX_ARGS, ValueLayout.ADDRESS.byteAlignment());
        for (int i = 0; i < MAX_ARGS; i++) {
            pointers.setAtIndex(ValueLayout.ADDRESS, i, values.asSlice(SLOT * i, SLOT));
        }
    }

    /** Forgets the arguments; returns this. */
    public KernelArgs clear() {
        count = 0;
        return this;
    }

    /** A device pointer to the start of a buffer. */
    public KernelArgs ptr(CudaBuffer buffer) {
        return i64(buffer.address());
    }

    /** A device pointer {@code byteOffset} bytes into a buffer. */
    public KernelArgs ptr(CudaBuffer buffer, long byteOffset) {
        return i64(buffer.address(byteOffset));
    }

    /** A raw device pointer. */
    public KernelArgs ptr(long deviceAddress) {
        return i64(deviceAddress);
    }

    public KernelArgs i32(int v) {
        slot().set(ValueLayout.JAVA_INT, 0, v);
        return this;
    }

    public KernelArgs i64(long v) {
        slot().set(ValueLayout.JAVA_LONG, 0, v);
        return this;
    }

    public KernelArgs f32(float v) {
        slot().set(ValueLayout.JAVA_FLOAT, 0, v);
        return this;
    }

    public KernelArgs f64(double v) {
        slot().set(ValueLayout.JAVA_DOUBLE, 0, v);
        return this;
    }

    /** Appends boxed values: Integer → i32, Long → i64, Float → f32, Double → f64, CudaBuffer → ptr. */
    public KernelArgs add(Object... args) {
        for (Object a : args) {
            switch (a) {
                case CudaBuffer b -> ptr(b);
                case Integer i -> i32(i);
                case Long l -> i64(l);
                case Float f -> f32(f);
                case Double d -> f64(d);
                case null -> throw new IllegalArgumentException("kernel argument " + count + " is null");
                default -> throw new IllegalArgumentException("kernel argument " + count + " has unsupported type "
                        + a.getClass().getName() + " (use CudaBuffer, Integer, Long, Float or Double)");
            }
        }
        return this;
    }

    public int count() {
        return count;
    }

    /** The {@code void **} to pass as kernelParams. */
    public MemorySegment kernelParams() {
        return pointers;
    }

    /** A copy of the argument slots (8 bytes each, as the driver will read them). */
    long[] slots() {
        long[] out = new long[count];
        for (int i = 0; i < count; i++) {
            out[i] = values.getAtIndex(ValueLayout.JAVA_LONG, i);
        }
        return out;
    }

    /** Refills the arguments with slots taken by {@link #slots()}; returns this. */
    KernelArgs restore(long[] slots) {
        if (slots.length > MAX_ARGS) {
            throw new IllegalArgumentException("a CUDA kernel launch takes at most " + MAX_ARGS + " arguments");
        }
        for (int i = 0; i < slots.length; i++) {
            values.setAtIndex(ValueLayout.JAVA_LONG, i, slots[i]);
        }
        count = slots.length;
        return this;
    }

    /** The value slot of argument {@code i} (for tests and debugging). */
    MemorySegment valueSlot(int i) {
        return values.asSlice(SLOT * i, SLOT);
    }

    private MemorySegment slot() {
        if (count >= MAX_ARGS) {
            throw new IllegalArgumentException("a CUDA kernel launch takes at most " + MAX_ARGS + " arguments");
        }
        MemorySegment s = values.asSlice(SLOT * count, SLOT);
        s.set(ValueLayout.JAVA_LONG, 0, 0L);
        count++;
        return s;
    }
}
