package io.gossgpu.cpu;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What Linux says is available for new allocations ({@code MemAvailable}: free memory plus reclaimable cache). */
public final class MemInfo {
    private MemInfo() {}

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
