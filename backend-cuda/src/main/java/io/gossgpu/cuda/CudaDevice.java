package io.gossgpu.cuda;

import static io.gossgpu.cuda.bindings.CudaException.check;

import io.gossgpu.cuda.bindings.Cuda;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

/**
 * What {@code goss-gpu info} and the tuning defaults need to know about one CUDA device.
 *
 * @param ordinal            the device number ({@code cuDeviceGet})
 * @param name               e.g. "NVIDIA H100 80GB HBM3"
 * @param major              compute capability major
 * @param minor              compute capability minor
 * @param multiprocessors    number of SMs
 * @param totalMemory        bytes ({@code cuDeviceTotalMem_v2})
 * @param memoryClockKHz     peak memory clock in kHz; 0 where the driver does not report it
 * @param memoryBusWidthBits global memory bus width in bits; 0 where the driver does not report it
 * @param clockKHz           SM clock in kHz; 0 where not reported
 * @param maxThreadsPerBlock largest block
 * @param maxSharedPerBlockOptin  largest shared memory per block after opt-in, bytes
 * @param l2CacheBytes       L2 size
 * @param warpSize           32 on every NVIDIA GPU so far
 */
public record CudaDevice(
        int ordinal,
        String name,
        int major,
        int minor,
        int multiprocessors,
        long totalMemory,
        int memoryClockKHz,
        int memoryBusWidthBits,
        int clockKHz,
        int maxThreadsPerBlock,
        int maxSharedPerBlockOptin,
        int l2CacheBytes,
        int warpSize) {

    /** Reads everything from the driver. CUDA must be initialised ({@link CudaDriver#availability()}). */
    static CudaDevice query(int ordinal) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(Cuda.C_INT);
            check("cuDeviceGet", Cuda.cuDeviceGet(out, ordinal));
            int dev = out.get(Cuda.C_INT, 0);
            MemorySegment nameBuf = arena.allocate(256);
            check("cuDeviceGetName", Cuda.cuDeviceGetName(nameBuf, 256, dev));
            String name = nameBuf.getString(0, StandardCharsets.UTF_8);
            MemorySegment bytes = arena.allocate(Cuda.size_t);
            check("cuDeviceTotalMem_v2", Cuda.cuDeviceTotalMem_v2(bytes, dev));
            return new CudaDevice(
                    ordinal,
                    name,
                    attribute(out, dev, Cuda.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                    attribute(out, dev, Cuda.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
                    attribute(out, dev, Cuda.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
                    bytes.get(Cuda.size_t, 0),
                    optionalAttribute(out, dev, Cuda.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
                    optionalAttribute(out, dev, Cuda.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
                    optionalAttribute(out, dev, Cuda.CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
                    attribute(out, dev, Cuda.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
                    attribute(out, dev, Cuda.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
                    attribute(out, dev, Cuda.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
                    attribute(out, dev, Cuda.CU_DEVICE_ATTRIBUTE_WARP_SIZE));
        }
    }

    private static int attribute(MemorySegment out, int dev, int attribute) {
        check("cuDeviceGetAttribute(" + attribute + ")", Cuda.cuDeviceGetAttribute(out, attribute, dev));
        return out.get(Cuda.C_INT, 0);
    }

    /** Clock attributes are informational; some drivers and devices (e.g. virtualised ones) do not report them. */
    private static int optionalAttribute(MemorySegment out, int dev, int attribute) {
        int rc = Cuda.cuDeviceGetAttribute(out, attribute, dev);
        return rc == Cuda.CUDA_SUCCESS ? Math.max(0, out.get(Cuda.C_INT, 0)) : 0;
    }

    /** Compute capability as an int: 90 for 9.0, 86 for 8.6. */
    public int computeCapability() {
        return major * 10 + minor;
    }

    /** Theoretical peak memory bandwidth in GB/s (10^9 bytes), or 0 when the driver does not report the clock or bus. */
    public double memoryBandwidthGBs() {
        return memoryBandwidthGBs(memoryClockKHz, memoryBusWidthBits);
    }

    /**
     * Peak bandwidth from the memory clock and bus width: 2 transfers per clock (DDR/HBM) × clock ×
     * bus width in bytes. For example an H100 SXM reports 2619000 kHz and 5120 bits: 3352 GB/s.
     */
    public static double memoryBandwidthGBs(int memoryClockKHz, int busWidthBits) {
        if (memoryClockKHz <= 0 || busWidthBits <= 0) {
            return 0;
        }
        return 2.0 * memoryClockKHz * 1e3 * (busWidthBits / 8.0) / 1e9;
    }

    /** One line for {@code goss-gpu info}. */
    public String describe() {
        double bw = memoryBandwidthGBs();
        return String.format(
                java.util.Locale.ROOT,
                "CUDA device %d: %s, compute capability %d.%d, %d SMs, %.1f GiB%s",
                ordinal,
                name,
                major,
                minor,
                multiprocessors,
                totalMemory / (1024.0 * 1024 * 1024),
                bw > 0 ? String.format(java.util.Locale.ROOT, ", %.0f GB/s peak memory bandwidth", bw) : "");
    }
}
