package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gossgpu.conformance.RequiredBackends;
import io.gossgpu.cuda.bindings.CudaException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Tests that need a CUDA device. Without one every test here is skipped with the driver's one-line
 * reason (e.g. "CUDA unavailable: libcuda.so.1 not found"), never passed.
 */
class CudaDeviceTest {

    private static CudaContext ctx;

    @BeforeAll
    static void open() {
        CudaDriver.Availability a = CudaDriver.backendAvailability();
        if (a.available()) {
            ctx = CudaContext.open(0);
            System.out.println(
                    ctx.device().describe() + ", driver CUDA " + CudaDriver.versionString(a.driverVersion()));
        }
    }

    /** Per test, so that each one is reported as skipped with the reason. */
    @BeforeEach
    void requireDevice() {
        RequiredBackends.requireAvailable(new CudaBackendProvider());
        assertTrue(ctx != null, "CUDA context was not opened");
    }

    @AfterAll
    static void close() {
        if (ctx != null) {
            ctx.close();
        }
    }

    @Test
    void deviceInfo() {
        CudaDevice d = ctx.device();
        assertFalse(d.name().isBlank());
        assertTrue(d.major() >= 1 && d.multiprocessors() >= 1 && d.totalMemory() > 0, d.toString());
        assertEquals(32, d.warpSize());
        long[] mem = ctx.memoryInfo();
        assertTrue(mem[0] > 0 && mem[0] <= mem[1], "free " + mem[0] + " total " + mem[1]);
        assertEquals(
                CudaDriver.availability().deviceCount(), CudaDriver.devices().size());
    }

    @Test
    void uploadDownloadRoundTrip() {
        Random rnd = new Random(1);
        try (Arena arena = Arena.ofConfined();
                CudaBuffer buf = ctx.allocate(1_000_003)) {
            MemorySegment src = arena.allocate(1_000_003);
            for (long i = 0; i < src.byteSize(); i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) rnd.nextInt());
            }
            buf.copyFrom(src);
            MemorySegment dst = arena.allocate(1_000_003);
            buf.copyTo(dst);
            assertEquals(-1, src.mismatch(dst));

            // heap segments go through staging; offsets land where asked
            float[] heap = new float[97];
            for (int i = 0; i < heap.length; i++) {
                heap[i] = rnd.nextFloat() - 0.5f;
            }
            buf.copyFrom(MemorySegment.ofArray(heap), 12);
            float[] back = new float[97];
            buf.copyTo(12, MemorySegment.ofArray(back));
            assertArrayEquals(heap, back);
            assertEquals(src.get(ValueLayout.JAVA_BYTE, 11), readByte(buf, 11), "byte before the range is untouched");

            assertThrows(
                    IndexOutOfBoundsException.class,
                    () -> buf.copyFrom(MemorySegment.ofArray(new byte[16]), 1_000_000));
        }
    }

    @Test
    void fillZeroAndDeviceCopy() {
        try (Arena arena = Arena.ofConfined();
                CudaBuffer a = ctx.allocate(4 * 1001);
                CudaBuffer b = ctx.allocate(4 * 1001)) {
            a.fill32(Float.floatToRawIntBits(1.5f));
            b.zero();
            b.copyFrom(a, 4 * 10, 4 * 20, 4 * 5, ctx.stream());
            MemorySegment host = arena.allocate(4 * 1001);
            b.copyTo(host);
            for (int i = 0; i < 1001; i++) {
                float expected = i >= 20 && i < 25 ? 1.5f : 0f;
                assertEquals(expected, host.getAtIndex(ValueLayout.JAVA_FLOAT, i), "element " + i);
            }
        }
    }

    @Test
    void pinnedAsyncCopies() {
        try (CudaHostBuffer pinned = new CudaHostBuffer(ctx, 4096);
                CudaBuffer buf = ctx.allocate(4096)) {
            MemorySegment p = pinned.segment();
            for (int i = 0; i < 1024; i++) {
                p.setAtIndex(ValueLayout.JAVA_INT, i, i * 7);
            }
            buf.copyFromAsync(p, 0, ctx.stream());
            ctx.synchronize();
            p.fill((byte) 0);
            buf.copyToAsync(0, p, ctx.stream());
            ctx.synchronize();
            for (int i = 0; i < 1024; i++) {
                assertEquals(i * 7, p.getAtIndex(ValueLayout.JAVA_INT, i));
            }
        }
    }

    @Test
    void rmsnormMatchesAJavaLoop() {
        try (CudaModule module = ctx.loadModule("rmsnorm")) {
            CudaKernel kernel = module.function("rmsnorm");
            KernelArgs args = new KernelArgs();
            Random rnd = new Random(42);
            for (int n : new int[] {2880, 97, 1, 1023, 4097}) {
                for (int block : new int[] {32, 128, 256, 1024}) {
                    int rows = 7;
                    float[] x = new float[rows * n];
                    float[] scale = new float[n];
                    for (int i = 0; i < x.length; i++) {
                        x[i] = (float) (rnd.nextGaussian() * 3.0);
                    }
                    for (int i = 0; i < n; i++) {
                        scale[i] = (float) (0.5 + rnd.nextDouble());
                    }
                    float eps = 1e-5f;
                    float[] y = new float[x.length];
                    try (CudaBuffer dx = ctx.allocate(4L * x.length);
                            CudaBuffer ds = ctx.allocate(4L * n);
                            CudaBuffer dy = ctx.allocate(4L * x.length)) {
                        dx.copyFrom(MemorySegment.ofArray(x));
                        ds.copyFrom(MemorySegment.ofArray(scale));
                        kernel.launch(
                                rows,
                                block,
                                args.clear()
                                        .ptr(dx)
                                        .ptr(ds)
                                        .ptr(dy)
                                        .params(new io.gossgpu.device.OpParams.NormParams(n, eps)));
                        dy.copyTo(MemorySegment.ofArray(y));
                    }
                    for (int r = 0; r < rows; r++) {
                        double ss = 0;
                        for (int i = 0; i < n; i++) {
                            ss += (double) x[r * n + i] * x[r * n + i];
                        }
                        double inv = 1.0 / Math.sqrt(ss / n + eps);
                        for (int i = 0; i < n; i++) {
                            double ref = x[r * n + i] * inv * scale[i];
                            double got = y[r * n + i];
                            if (Math.abs(got - ref) > 1e-5 * Math.abs(ref) + 1e-30) {
                                fail("rmsnorm n=" + n + " block=" + block + " row " + r + " element " + i + ": got "
                                        + got + ", expected " + ref);
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void addIsExactAndWorksInPlace() {
        int n = 1_000_003;
        Random rnd = new Random(7);
        float[] a = new float[n];
        float[] b = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) rnd.nextGaussian();
            b[i] = (float) rnd.nextGaussian();
        }
        try (CudaModule module = ctx.loadModule("add");
                CudaBuffer da = ctx.allocate(4L * n);
                CudaBuffer db = ctx.allocate(4L * n)) {
            CudaKernel add = module.function("add");
            da.copyFrom(MemorySegment.ofArray(a));
            db.copyFrom(MemorySegment.ofArray(b));
            add.launch(1024, 256, da, db, da, new io.gossgpu.device.OpParams.AddParams(n)); // in place: a += b
            float[] y = new float[n];
            da.copyTo(MemorySegment.ofArray(y));
            for (int i = 0; i < n; i++) {
                if (Float.floatToRawIntBits(y[i]) != Float.floatToRawIntBits(a[i] + b[i])) {
                    fail("add element " + i + ": got " + y[i] + ", expected " + (a[i] + b[i]));
                }
            }
        }
    }

    @Test
    void graphReplaysCapturedLaunches() {
        int n = 4099;
        float[] a = new float[n];
        float[] b = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = i * 0.25f;
            b[i] = 1f / (i + 1);
        }
        try (CudaModule module = ctx.loadModule("add");
                CudaBuffer da = ctx.allocate(4L * n);
                CudaBuffer db = ctx.allocate(4L * n)) {
            CudaKernel add = module.function("add");
            da.copyFrom(MemorySegment.ofArray(a));
            db.copyFrom(MemorySegment.ofArray(b));
            KernelArgs args =
                    new KernelArgs().ptr(da).ptr(db).ptr(da).params(new io.gossgpu.device.OpParams.AddParams(n));
            try (CudaGraph graph = CudaGraph.capture(
                    ctx.stream(),
                    () -> add.launch(ctx.stream(), CudaKernel.Dim3.of(17), CudaKernel.Dim3.of(256), 0, args))) {
                graph.launch(ctx.stream());
                graph.launch(ctx.stream());
            }
            float[] y = new float[n];
            da.copyTo(MemorySegment.ofArray(y));
            for (int i = 0; i < n; i++) {
                assertEquals((a[i] + b[i]) + b[i], y[i], "element " + i);
            }
        }
    }

    @Test
    void eventsTimeWork() {
        try (CudaEvent start = new CudaEvent(ctx);
                CudaEvent end = new CudaEvent(ctx);
                CudaBuffer buf = ctx.allocate(1 << 24)) {
            start.record(ctx.stream());
            buf.zero();
            end.record(ctx.stream());
            float ms = CudaEvent.elapsedMillis(start, end);
            assertTrue(ms >= 0 && ms < 10_000, "elapsed " + ms);
        }
    }

    @Test
    void invalidPtxReportsTheJitLogOnOneLine() {
        String ptx =
                ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry broken() {\n  this is not ptx;\n}\n";
        CudaException e = assertThrows(
                CudaException.class, () -> CudaModule.loadPtx(ctx, "broken.ptx", ptx.getBytes(StandardCharsets.UTF_8)));
        assertTrue(
                e.getMessage().startsWith("cuModuleLoadDataEx(broken.ptx) failed: CUDA_ERROR_INVALID_PTX"),
                e.getMessage());
        assertTrue(e.getMessage().contains("JIT log: "), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
    }

    @Test
    void clearErrorsForMissingKernelsAndHugeAllocations() {
        try (CudaModule module = ctx.loadModule("add")) {
            CudaException e = assertThrows(CudaException.class, () -> module.function("nope"));
            assertTrue(e.getMessage().startsWith("no CUDA kernel nope in add.sm_"), e.getMessage());
        }
        CudaException e = assertThrows(CudaException.class, () -> ctx.allocate(1L << 50));
        assertTrue(
                e.getMessage()
                        .startsWith(
                                "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory): allocating 1024.0 TiB"),
                e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ctx.allocate(0));
    }

    private static byte readByte(CudaBuffer buf, long offset) {
        byte[] one = new byte[1];
        buf.copyTo(offset, MemorySegment.ofArray(one));
        return one[0];
    }
}
