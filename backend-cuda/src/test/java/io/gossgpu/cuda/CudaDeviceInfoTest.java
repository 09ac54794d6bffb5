package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class CudaDeviceInfoTest {

    @Test
    void bandwidthFromMemoryClockAndBusWidth() {
        // H100 SXM5: 2619 MHz HBM3, 5120-bit bus
        assertEquals(3352.32, CudaDevice.memoryBandwidthGBs(2_619_000, 5120), 1e-6);
        // A100 40GB: 1215 MHz HBM2, 5120-bit bus
        assertEquals(1555.2, CudaDevice.memoryBandwidthGBs(1_215_000, 5120), 1e-6);
        assertEquals(0, CudaDevice.memoryBandwidthGBs(0, 5120));
        assertEquals(0, CudaDevice.memoryBandwidthGBs(1_215_000, 0));
    }

    @Test
    void describeIsOneLine() {
        CudaDevice d = new CudaDevice(
                0,
                "NVIDIA H100 80GB HBM3",
                9,
                0,
                132,
                85_045_870_592L,
                2_619_000,
                5120,
                1_980_000,
                1024,
                232_448,
                52_428_800,
                32);
        assertEquals(90, d.computeCapability());
        assertEquals(
                "CUDA device 0: NVIDIA H100 80GB HBM3, compute capability 9.0, 132 SMs, 79.2 GiB, 3352 GB/s peak memory bandwidth",
                d.describe());
        CudaDevice noClock = new CudaDevice(1, "X", 8, 6, 10, 1L << 30, 0, 0, 0, 1024, 0, 0, 32);
        assertEquals("CUDA device 1: X, compute capability 8.6, 10 SMs, 1.0 GiB", noClock.describe());
    }

    @Test
    void humanBytes() {
        assertEquals("512 bytes", CudaBuffer.humanBytes(512));
        assertEquals("1.5 KiB", CudaBuffer.humanBytes(1536));
        assertEquals("2.0 GiB", CudaBuffer.humanBytes(2L << 30));
    }
}
