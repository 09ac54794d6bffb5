package io.gossgpu.bench;

import io.gossgpu.GossException;
import io.gossgpu.cpu.MemInfo;
import io.gossgpu.cpu.bindings.goss_cpu_h;
import io.gossgpu.cpu.matmul.NativeCpu;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * What this machine's memory gives a plain streaming read: {@code backend-cpu/kernels/stream_probe.c} through FFM (POSIX
 * threads summing their slices of a buffer of several GiB with AVX2 loads, best of a few passes; no JVM in the
 * loop). Decode's share of bandwidth is taken against this figure, so that it says how close a token comes to the
 * machine, not to a Java loop ({@link ReadBandwidth}, printed beside it). The same C file builds a command of its
 * own for scripts that time other engines in the same sitting.
 */
public final class StreamProbe {
    /** A buffer far beyond every cache (4 GiB), when memory allows; a quarter of the available memory otherwise. */
    public static final long DEFAULT_BYTES = 4L << 30;

    static final long MIN_BYTES = 256L << 20;
    public static final int DEFAULT_PASSES = 8;
    /**
     * The buffer of a probe kept open between decode tokens, and its passes per measurement (the best counts): one
     * pass over 512 MiB takes 8-16 ms at 32-64 GB/s and read 3-10 % below the 4 GiB best of 8 on a 2-core VM (a thread
     * started late); the best of two agreed with it within 3 %.
     */
    static final long BETWEEN_TOKENS_BYTES = 512L << 20;

    static final int BETWEEN_TOKENS_PASSES = 2;

    private StreamProbe() {}

    /** Null where the native cpu kernels cannot run (the reason is {@link NativeCpu#unavailableReason()}). */
    public static ReadBandwidth.Result measure(int threads) {
        if (NativeCpu.unavailableReason() != null) return null;
        return measure(threads, bytesFor(MemInfo.availableBytes()), DEFAULT_PASSES);
    }

    /** The buffer for {@code available} bytes of free memory (−1: unknown): 4 GiB, or a quarter of it, at least 256 MiB. */
    static long bytesFor(long available) {
        return available > 0 ? Math.max(MIN_BYTES, Math.min(DEFAULT_BYTES, available / 4)) : DEFAULT_BYTES;
    }

    /** The C probe over about {@code bytes} (whole 4 KiB pages per thread), best of {@code passes} (1 to 64). */
    static ReadBandwidth.Result measure(int threads, long bytes, int passes) {
        if (threads < 1 || passes < 1 || passes > 64 || bytes < 4096L * threads)
            throw new IllegalArgumentException("threads " + threads + ", bytes " + bytes + ", passes " + passes);
        double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        long size = bytes / threads / 4096 * 4096 * threads;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment method = a.allocate(ValueLayout.JAVA_INT);
            double gbps = goss_cpu_h.goss_cpu_stream_probe(threads, bytes, passes, method);
            if (gbps < 0)
                throw new GossException(String.format(
                        Locale.ROOT,
                        "the C streaming probe could not allocate %.1f GiB or start %d threads; "
                                + "skip it with --no-bandwidth-probe",
                        size / (double) (1L << 30),
                        threads));
            String how =
                    method.get(ValueLayout.JAVA_INT, 0) == 1 ? "256-bit AVX2 loads in C" : "64-bit word loads in C";
            return new ReadBandwidth.Result(gbps, threads, size, how, passes, load);
        }
    }

    /**
     * The probe kept open for passes between other work ({@code goss_cpu_probe_open}): its buffer written once, each
     * {@link #pass} read by fresh threads. Null where the native cpu kernels cannot run; a {@link GossException} when
     * the buffer cannot be had.
     */
    static Open open(int threads, long bytes) {
        if (NativeCpu.unavailableReason() != null) return null;
        if (threads < 1 || bytes < 4096L * threads)
            throw new IllegalArgumentException("threads " + threads + ", bytes " + bytes);
        MemorySegment handle = goss_cpu_h.goss_cpu_probe_open(threads, bytes);
        if (handle.equals(MemorySegment.NULL))
            throw new GossException(String.format(
                    Locale.ROOT,
                    "the C streaming probe could not allocate %.2f GiB or start %d threads; "
                            + "skip it with --no-bandwidth-probe",
                    bytes / (double) (1L << 30),
                    threads));
        return new Open(handle);
    }

    /** An open probe; its owner closes it (the native buffer is freed then). */
    static final class Open implements AutoCloseable {
        private MemorySegment handle;

        private Open(MemorySegment handle) {
            this.handle = handle;
        }

        /** The best of {@link #BETWEEN_TOKENS_PASSES} passes over the buffer: GB/s. */
        double pass() {
            if (handle == null) throw new IllegalStateException("the probe is closed");
            double gbps = goss_cpu_h.goss_cpu_probe_pass(handle, BETWEEN_TOKENS_PASSES);
            if (gbps <= 0) throw new GossException("the C streaming probe could not start its threads");
            return gbps;
        }

        @Override
        public void close() {
            if (handle != null) goss_cpu_h.goss_cpu_probe_close(handle);
            handle = null;
        }
    }
}
