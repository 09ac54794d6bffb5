package io.gossgpu.bench;

import io.gossgpu.GossException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;

/**
 * This machine's streaming read bandwidth, measured: {@code threads} threads each sum their own slice of
 * one off-heap buffer far larger than any cache (1 GiB by default), all starting together, over several
 * passes; the best pass counts (as STREAM reports it). A pass's time runs from the first thread's start to
 * the last one's end. The sums go to a volatile field, so the loads cannot be optimised away. The loads
 * are Vector API loads of the preferred width when jdk.incubator.vector is present (the cpu kernels' own
 * kind of load), else 8-byte long reads with four independent sums.
 */
public final class ReadBandwidth {
    public static final long DEFAULT_BYTES = 1L << 30;
    static final int PASSES = 10;
    private static volatile long sink;

    private ReadBandwidth() {}

    /** Sums the longs of {@code [from, to)} of {@code m} (both multiples of 64). */
    interface SliceReader {
        long read(MemorySegment m, long from, long to);

        /** How it loads, for the report ("256-bit Vector API loads"). */
        String method();
    }

    /** {@code gbPerSecond}: 10^9 bytes per second of the best pass. */
    public record Result(double gbPerSecond, int threads, long bytes, String method, int passes) {
        /** e.g. "41.3 GB/s (2 threads reading a 1.0 GiB buffer with 256-bit Vector API loads, best of 10 passes)". */
        public String describe() {
            return String.format(Locale.ROOT, "%.1f GB/s (%d thread%s reading a %.1f GiB buffer with %s, best of %d passes)",
                    gbPerSecond, threads, threads == 1 ? "" : "s", bytes / (double) (1L << 30), method, passes);
        }
    }

    public static Result measure(int threads) {
        return measure(threads, DEFAULT_BYTES, PASSES);
    }

    static Result measure(int threads, long bytes, int passes) {
        if (threads < 1 || passes < 1 || bytes < 64L * threads) throw new IllegalArgumentException("threads " + threads + ", bytes " + bytes);
        SliceReader reader = ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent() ? new VectorSliceReader() : new LongSliceReader();
        long size = bytes / (64L * threads) * 64 * threads;
        long slice = size / threads;
        long[][] start = new long[passes][threads], end = new long[passes][threads];
        try (Arena arena = Arena.ofShared()) {
            MemorySegment m;
            try {
                m = arena.allocate(size, 4096);
            } catch (OutOfMemoryError e) {
                throw new GossException(String.format(Locale.ROOT, "cannot allocate %.1f GiB to measure the read bandwidth (%s); "
                        + "give it with --bandwidth GB/s or skip it with --no-bandwidth-probe", size / (double) (1L << 30), e.getMessage()));
            }
            m.fill((byte) 0x5A); // touches every page, so the passes read committed memory, not the shared zero page
            CyclicBarrier together = new CyclicBarrier(threads);
            Thread[] ts = new Thread[threads];
            Throwable[] failed = new Throwable[1];
            for (int t = 0; t < threads; t++) {
                int id = t;
                ts[t] = Thread.ofPlatform().name("goss-bandwidth-" + t).daemon().start(() -> {
                    long s = 0;
                    try {
                        for (int p = 0; p < passes; p++) {
                            together.await();
                            start[p][id] = System.nanoTime();
                            s += reader.read(m, id * slice, (id + 1) * slice);
                            end[p][id] = System.nanoTime();
                        }
                    } catch (InterruptedException | BrokenBarrierException e) {
                        synchronized (failed) { failed[0] = e; }
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
        for (int p = 0; p < passes; p++) {
            long first = Long.MAX_VALUE, last = Long.MIN_VALUE;
            for (int t = 0; t < threads; t++) {
                first = Math.min(first, start[p][t]);
                last = Math.max(last, end[p][t]);
            }
            best = Math.min(best, last - first);
        }
        return new Result(size / (double) Math.max(1, best), threads, size, reader.method(), passes);
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
