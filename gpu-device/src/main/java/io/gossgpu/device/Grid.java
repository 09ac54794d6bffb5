package io.gossgpu.device;

/**
 * The shape of one kernel launch: {@code x × y × z} thread groups (CUDA blocks, OpenCL work-groups, Metal
 * threadgroups) of {@code threads} threads each, the threads along the first dimension. {@code threads == 0} is the
 * grid of {@link #items}: one thread per item, the group size left to the API (OpenCL's driver, a Metal kernel's
 * threadgroup knob); an API that must be told (CUDA) refuses it. A grid with an empty dimension launches nothing.
 *
 * @param x       groups (or, for {@link #items}, items) along the first dimension
 * @param y       along the second
 * @param z       along the third
 * @param threads threads per group; 0 for an {@link #items} grid
 */
public record Grid(long x, long y, long z, int threads) {
    public Grid {
        if (threads < 0) throw new IllegalArgumentException("threads per group must be ≥ 0, got " + threads);
    }

    /** {@code x} groups of {@code threads} threads. */
    public static Grid of(long x, int threads) {
        return new Grid(x, 1, 1, threads);
    }

    /** {@code x × y} groups of {@code threads} threads. */
    public static Grid of(long x, long y, int threads) {
        return new Grid(x, y, 1, threads);
    }

    /** {@code x × y × z} groups of {@code threads} threads. */
    public static Grid of(long x, long y, long z, int threads) {
        return new Grid(x, y, z, threads);
    }

    /** One thread per item of an {@code x × y × z} index space, the group size the API's. */
    public static Grid items(long x, long y, long z) {
        return new Grid(x, y, z, 0);
    }

    /** One thread per item of {@code x × y}. */
    public static Grid items(long x, long y) {
        return items(x, y, 1);
    }

    /** One thread per item of {@code x}. */
    public static Grid items(long x) {
        return items(x, 1, 1);
    }

    /** Whether the API picks the group size (an {@link #items} grid). */
    public boolean apiGroups() {
        return threads == 0;
    }

    /** Whether there is nothing to launch (an empty dimension). */
    public boolean empty() {
        return x <= 0 || y <= 0 || z <= 0;
    }

    /** Dimensions in use: 3 when {@code z > 1}, 2 when {@code y > 1}, else 1 (OpenCL's work_dim). */
    public int dimensions() {
        return z > 1 ? 3 : y > 1 ? 2 : 1;
    }

    /** {@code ⌈a / b⌉}, for grids sized by items per group. */
    public static int ceilDiv(long a, long b) {
        return Math.toIntExact((a + b - 1) / b);
    }
}
