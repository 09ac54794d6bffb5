package io.gossgpu.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class MemInfoTest {
    @Test
    void readsAKilobyteLineOfAProcFileInBytes() {
        String rollup =
                "55d0c0000000-7ffd5f1fe000 ---p 00000000 00:00 0 [rollup]\nRss:             1290596 kB\nAnonymous:        997824 kB\n"
                        + "AnonHugePages:    931840 kB\nShmemPmdMapped:        0 kB\n";
        assertEquals(931840L * 1024, MemInfo.kilobytes(rollup, "AnonHugePages:"));
        assertEquals(1290596L * 1024, MemInfo.kilobytes(rollup, "Rss:"));
        assertEquals(-1, MemInfo.kilobytes(rollup, "Swap:"));
    }

    @Test
    void repackedWeightsLandOnHugePagesWhereLinuxHasThem() {
        long huge = MemInfo.hugePageBytes();
        org.junit.jupiter.api.Assumptions.assumeTrue(huge >= 0, "no /proc/self/smaps_rollup here");
        org.junit.jupiter.api.Assumptions.assumeTrue(
                MemInfo.hugePageMode().contains("[always]")
                        || MemInfo.hugePageMode().contains("[madvise]"),
                "transparent huge pages are off: " + MemInfo.hugePageMode());
        org.junit.jupiter.api.Assumptions.assumeTrue(
                io.gossgpu.cpu.matmul.NativeCpu.unavailableReason() == null, "no native kernels");
        // 64 MiB through the allocator the repacked weights use, every page touched: the process gains huge pages
        // (unless memory is too fragmented for any: then only a warning in bench, not a failure here)
        long bytes = 64L << 20, fallbacks = fallbacks();
        java.lang.foreign.MemorySegment p =
                io.gossgpu.cpu.bindings.goss_cpu_h.goss_cpu_alloc(bytes).reinterpret(bytes);
        try {
            p.fill((byte) 1);
            long after = MemInfo.hugePageBytes();
            // the kernel tried and had none free (here or in another process meanwhile): nothing to say about the
            // advice
            org.junit.jupiter.api.Assumptions.assumeTrue(
                    after > huge || fallbacks() == fallbacks, "huge page faults fell back to 4 KiB pages");
            assertTrue(after > huge, "no huge page for memory advised MADV_HUGEPAGE");
            assertTrue(after - huge <= bytes + (2L << 20), "more huge pages than allocated: " + (after - huge));
        } finally {
            io.gossgpu.cpu.bindings.goss_cpu_h.goss_cpu_free(p, bytes);
        }
    }

    /** The system's count of huge page faults that fell back to small pages (−1: unknown, which never equals a later count). */
    private static long fallbacks() {
        try {
            return MemInfo.kilobytes(
                            java.nio.file.Files.readString(java.nio.file.Path.of("/proc/vmstat"))
                                    .replace("thp_fault_fallback ", "thp_fault_fallback: "),
                            "thp_fault_fallback:")
                    / 1024;
        } catch (java.io.IOException e) {
            return -1;
        }
    }
}
