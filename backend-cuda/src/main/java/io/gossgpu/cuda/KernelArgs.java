package io.gossgpu.cuda;

import io.gossgpu.device.KernelParams;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Objects;

/**
 * The {@code void **kernelParams} array of {@code cuLaunchKernel}, built once and refilled per launch
 * without allocating: {@code args.clear().ptr(x).ptr(scale).ptr(y).params(new NormParams(cols, eps))}.
 *
 * <p>A kernel of {@code backend-cuda/kernels} takes its buffers (device pointers, {@link #ptr}) first, then one params struct
 * of all its scalars by value, last ({@link #params}: a {@link KernelParams} record mirroring the struct; see
 * backend-cuda/kernels/README.md). The values sit in 8-byte, 8-aligned slots: a pointer or a single scalar takes one slot,
 * a struct as many consecutive slots as its C size needs (its bytes written there in C layout), and
 * {@code kernelParams[i]} points at the first slot of argument i. The driver reads as many bytes there as the
 * kernel's parameter has, so the Java type must match the kernel's C type: any pointer → {@link #ptr}, a params
 * struct → {@link #params} with its record; the single scalars ({@code int}/{@code unsigned} → {@link #i32},
 * {@code long long} → {@link #i64}, {@code float} → {@link #f32}, {@code double} → {@link #f64}) remain for other
 * kernels (tests). The driver copies the values during {@code cuLaunchKernel}, so the object may be refilled right
 * after a launch returns. Not thread-safe: one per launching thread.
 */
public final class KernelArgs {

    /** Most arguments one launch can take. */
    public static final int MAX_ARGS = 32;
    /** Most bytes of argument values one launch can take (each argument from a multiple of 8). */
    public static final int MAX_BYTES = 512;

    private static final long SLOT = 8;
    private static final int SLOTS = (int) (MAX_BYTES / SLOT);

    private final MemorySegment values;
    private final MemorySegment pointers;
    /** The value memory from slot i on (where a struct is written), made once. */
    private final MemorySegment[] from = new MemorySegment[SLOTS];
    /** The first slot of each argument. */
    private final int[] starts = new int[MAX_ARGS];

    private int count, used;
    /** The record of the last struct appended (null: none), for the launch's check against its kernel's entry. */
    private Class<? extends KernelParams> paramsType;

    public KernelArgs() {
        if (ValueLayout.ADDRESS.byteSize() != 8) throw new IllegalStateException("CUDA needs 64-bit pointers");
        Arena arena = Arena.ofAuto();
        values = arena.allocate(SLOT * SLOTS, SLOT);
        pointers = arena.allocate(ValueLayout.ADDRESS.byteSize() * MAX_ARGS, ValueLayout.ADDRESS.byteAlignment());
        for (int i = 0; i < SLOTS; i++) from[i] = values.asSlice(SLOT * i);
    }

    /** Forgets the arguments; returns this. */
    public KernelArgs clear() {
        count = 0;
        used = 0;
        paramsType = null;
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
        values.set(ValueLayout.JAVA_INT, SLOT * slots(1), v);
        return this;
    }

    public KernelArgs i64(long v) {
        values.set(ValueLayout.JAVA_LONG, SLOT * slots(1), v);
        return this;
    }

    public KernelArgs f32(float v) {
        values.set(ValueLayout.JAVA_FLOAT, SLOT * slots(1), v);
        return this;
    }

    public KernelArgs f64(double v) {
        values.set(ValueLayout.JAVA_DOUBLE, SLOT * slots(1), v);
        return this;
    }

    /**
     * A params struct by value, as one argument: its bytes in C layout ({@link KernelParams#writeTo}) in as many
     * consecutive slots as its size needs, written where the driver will read them.
     */
    public KernelArgs params(KernelParams p) {
        long size = p.byteSize();
        int start = slots((int) ((size + SLOT - 1) / SLOT));
        p.writeTo(from[start]);
        paramsType = p.getClass();
        return this;
    }

    /** Appends boxed values: Integer → i32, Long → i64, Float → f32, Double → f64, CudaBuffer → ptr, KernelParams → params. */
    public KernelArgs add(Object... args) {
        for (Object a : args) {
            switch (a) {
                case CudaBuffer b -> ptr(b);
                case Integer i -> i32(i);
                case Long l -> i64(l);
                case Float f -> f32(f);
                case Double d -> f64(d);
                case KernelParams p -> params(p);
                case null -> throw new IllegalArgumentException("kernel argument " + count + " is null");
                default ->
                    throw new IllegalArgumentException("kernel argument " + count + " has unsupported type "
                            + a.getClass().getName()
                            + " (use CudaBuffer, Integer, Long, Float, Double or a KernelParams record)");
            }
        }
        return this;
    }

    /** Arguments (a struct counts as one). */
    public int count() {
        return count;
    }

    /** The record of the params struct appended last, or null. */
    Class<? extends KernelParams> paramsType() {
        return paramsType;
    }

    /** The {@code void **} to pass as kernelParams. */
    public MemorySegment kernelParams() {
        return pointers;
    }

    /** A copy of the arguments, as {@link #restore} takes them back (a launch recorded for a graph). */
    record Saved(long[] slots, int[] starts, Class<? extends KernelParams> paramsType) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Saved s
                    && Arrays.equals(slots, s.slots)
                    && Arrays.equals(starts, s.starts)
                    && paramsType == s.paramsType;
        }

        @Override
        public int hashCode() {
            return 31 * (31 * Arrays.hashCode(slots) + Arrays.hashCode(starts)) + Objects.hashCode(paramsType);
        }

        @Override
        public String toString() {
            return "Saved[slots=" + Arrays.toString(slots) + ", starts=" + Arrays.toString(starts) + ", params="
                    + paramsType + "]";
        }
    }

    /** A copy of the argument slots (8 bytes each, as the driver will read them) and where each argument starts. */
    Saved save() {
        long[] out = new long[used];
        for (int i = 0; i < used; i++) {
            out[i] = values.getAtIndex(ValueLayout.JAVA_LONG, i);
        }
        return new Saved(out, Arrays.copyOf(starts, count), paramsType);
    }

    /** Refills the arguments with a copy taken by {@link #save()}; returns this. */
    KernelArgs restore(Saved saved) {
        long[] slots = saved.slots();
        int[] at = saved.starts();
        if (at.length > MAX_ARGS || slots.length > SLOTS) {
            throw new IllegalArgumentException(
                    "a CUDA kernel launch takes at most " + MAX_ARGS + " arguments of " + MAX_BYTES + " bytes in all");
        }
        for (int i = 0; i < slots.length; i++) {
            values.setAtIndex(ValueLayout.JAVA_LONG, i, slots[i]);
        }
        for (int i = 0; i < at.length; i++) {
            point(i, at[i]);
        }
        count = at.length;
        used = slots.length;
        paramsType = saved.paramsType();
        return this;
    }

    /** The value memory of argument {@code i}: its slots (for tests and debugging). */
    MemorySegment valueSlot(int i) {
        if (i < 0 || i >= count) throw new IndexOutOfBoundsException(i);
        int end = i + 1 < count ? starts[i + 1] : used;
        return values.asSlice(SLOT * starts[i], SLOT * (end - starts[i]));
    }

    /** Takes the next {@code n} slots, zeroed, for a new argument; returns the first. */
    private int slots(int n) {
        if (count >= MAX_ARGS || used + n > SLOTS) {
            throw new IllegalArgumentException(
                    "a CUDA kernel launch takes at most " + MAX_ARGS + " arguments of " + MAX_BYTES + " bytes in all");
        }
        int start = used;
        for (int i = 0; i < n; i++) {
            values.setAtIndex(ValueLayout.JAVA_LONG, start + i, 0L);
        }
        point(count, start);
        count++;
        used += n;
        return start;
    }

    /** {@code kernelParams[arg]} = the address of slot {@code slot}. */
    private void point(int arg, int slot) {
        starts[arg] = slot;
        pointers.setAtIndex(ValueLayout.JAVA_LONG, arg, values.address() + SLOT * slot);
    }
}
