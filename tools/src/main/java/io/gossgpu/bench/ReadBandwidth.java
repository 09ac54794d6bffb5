package io.gossgpu.bench;

import io.gossgpu.GossException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.util.Locale;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;

/**
 * This machine's streaming read bandwidth, measured: {@code threads} threads each sum their own slice of
 * one off-heap buffer far larger than any cache (1 GiB by default), all starting together, pass after pass
 * (at least {@value #MIN_PASSES}, then until {@value #MIN_SECONDS} s have gone by); the best pass counts, as
 * STREAM reports it, which on a shared machine is also the pass least disturbed by other processes. A
 * pass's time runs from the first thread's start to the last one's end. The sums go to a volatile field,
 * so the loads cannot be optimised away. The loads are Vector API loads of the preferred width when
 * jdk.incubator.vector is present (the cpu kernels' own kind of load), else 8-byte long reads with four
 * independent sums. The system load average is noted, since other processes lower the figure.
 */
public final class ReadBandwidth {
    public static final long DEFAULT_BYTES = 1L << 30;
    static final int MIN_PASSES = 10, MAX_PASSES = 1000;
    static final double MIN_SECONDS = 1.0;
    private static volatile long sink;

    private ReadBandwidth() {}

    /** Sums the longs of {@code [from, to)} of {@code m} (both multiples of 64). */
    interface SliceReader {
        long read(MemorySegment m, long from, long to);

        /** How it loads, for the report ("256-bit Vector API loads"). */
        String method();
    }

    /**
     * {@code gbPerSecond}: 10^9 bytes per second of the best pass; {@code loadAverage}: the system's one-minute
     * load average when the probe started (negative when the OS does not say).
     */
    public record Result(double gbPerSecond, int threads, long bytes, String method, int passes, double loadAverage) {
        /** e.g. "41.3 GB/s (2 threads reading a 1.0 GiB buffer with 256-bit Vector API loads, best of 37 passes; load average 0.12)". */
        public String describe() {
            return String.format(
                    Locale.ROOT,
                    "%.1f GB/s (%d thread%s reading a %.1f GiB buffer with %s, best of %d passes%s)",
                    gbPerSecond,
                    threads,
                    threads == 1 ? "" : "s",
                    bytes / (double) (1L << 30),
                    method,
                    passes,
                    loadAverage >= 0 ? String.format(Locale.ROOT, "; load average %.2f", loadAverage) : "");
        }
    }

    public static Result measure(int threads) {
        return measure(threads, DEFAULT_BYTES, MIN_PASSES, MIN_SECONDS);
    }

    static Result measure(int threads, long bytes, int minPasses, double minSeconds) {
        if (threads < 1 || minPasses < 1 || minPasses > MAX_PASSES || bytes < 64L * threads)
            throw new IllegalArgumentException("threads " + threads + ", bytes " + bytes + ", passes " + minPasses);
        double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        SliceReader reader =
                ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent()
                        ? new VectorSliceReader()
                        : new LongSliceReader();
        long size = bytes / (64L * threads) * 64 * threads;
        long slice = size / threads;
        long[][] start = new long[MAX_PASSES][threads], end = new long[MAX_PASSES][threads];
        int[] passes = {0};
        boolean[] more = {true};
        long[] deadline = {0};
        try (Arena arena = Arena.ofShared()) {
            MemorySegment m;
            try {
                m = arena.allocate(size, 4096);
            } catch (OutOfMemoryError e) {
                throw new GossException(String.format(
                        Locale.ROOT,
                        "cannot allocate %.1f GiB to measure the read bandwidth (%s); "
                                + "give it with --bandwidth GB/s or skip it with --no-bandwidth-probe",
                        size / (double) (1L << 30),
                        e.getMessage()));
            }
            m.fill((byte) 0x5A); // touches every page, so the passes read committed memory, not the shared zero page
            // the last thread to arrive decides, for all, whether another pass runs (the barrier publishes it)
            CyclicBarrier together = new CyclicBarrier(threads, () -> {
                if (passes[0] == 0) deadline[0] = System.nanoTime() + (long) (minSeconds * 1e9);
                more[0] = passes[0] < minPasses || (passes[0] < MAX_PASSES && System.nanoTime() < deadline[0]);
                if (more[0]) passes[0]++;
            });
            Thread[] ts = new Thread[threads];
            Throwable[] failed = new Throwable[1];
            for (int t = 0; t < threads; t++) {
                int id = t;
                ts[t] = Thread.ofPlatform().name("goss-bandwidth-" + t).daemon().start(() -> {
                    long s = 0;
                    try {
                        while (true) {
                            together.await();
                            if (!more[0]) break;
                            int p = passes[0] - 1;
                            start[p][id] = System.nanoTime();
                            s += reader.read(m, id * slice, (id + 1) * slice);
                            end[p][id] = System.nanoTime();
                        }
                    } catch (InterruptedException | BrokenBarrierException e) {
                        synchronized (failed) {
                            failed[0] = e;
                        }
                    }
                    sink ^= s;
                });
            }
            for (Thread t : ts) t.join();
            if (failed[0] != null) throw new IllegalStateException("bandwidth probe interrupted", failed[0]);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("bandwidth probe interrupted", e);
        }
        long best = Long.MAX_VALUE;
        for (int p = 0; p < passes[0]; p++) {
            long first = Long.MAX_VALUE, last = Long.MIN_VALUE;
            for (int t = 0; t < threads; t++) {
                first = Math.min(first, start[p][t]);
                last = Math.max(last, end[p][t]);
            }
            best = Math.min(best, last - first);
        }
        return new Result(size / (double) Math.max(1, best), threads, size, reader.method(), passes[0], load);
    }

    /** Plain 8-byte reads, four sums in flight. */
    static final class LongSliceReader implements SliceReader {
        @Override
        public long read(MemorySegment m, long from, long to) {
            long a = 0, b = 0, c = 0, d = 0;
            for (long off = from; off < to; off += 32) {
                a += m.get(ValueLayout.JAVA_LONG, off);
                b += m.get(ValueLayout.JAVA_LONG, off + 8);
                c += m.get(ValueLayout.JAVA_LONG, off + 16);
                d += m.get(ValueLayout.JAVA_LONG, off + 24);
            }
            return a + b + c + d;
        }

        @Override
        public String method() {
            return "8-byte long loads";
        }
    }
}
