package io.gossgpu.cpu;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What Linux says is available for new allocations ({@code MemAvailable}: free memory plus reclaimable cache), and how
 * much of this process's memory sits on 2 MiB pages.
 */
public final class MemInfo {
    private MemInfo() {}

    /**
     * Bytes of this process's anonymous memory on transparent huge pages ({@code AnonHugePages} of
     * /proc/self/smaps_rollup): the repacked weights belong there (goss_cpu_alloc advises them). −1 where Linux does not say.
     */
    public static long hugePageBytes() {
        try {
            return kilobytes(Files.readString(Path.of("/proc/self/smaps_rollup")), "AnonHugePages:");
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The transparent huge page mode ("always [madvise] never"), or "unknown". */
    public static String hugePageMode() {
        try {
            return Files.readString(Path.of("/sys/kernel/mm/transparent_hugepage/enabled"))
                    .trim();
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    /** The value of a "{@code key}   1234 kB" line of a /proc file, in bytes; −1 when there is none. */
    static long kilobytes(String text, String key) {
        for (String line : text.split("\n"))
            if (line.startsWith(key)) {
                String[] f = line.substring(key.length()).trim().split("\\s+");
                return Long.parseLong(f[0]) * 1024;
            }
        return -1;
    }

    /** Bytes, or −1 where /proc/meminfo is absent or unreadable. */
    public static long availableBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemAvailable:")) {
                    String[] f = line.trim().split("\\s+");
                    return Long.parseLong(f[1]) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }
}
