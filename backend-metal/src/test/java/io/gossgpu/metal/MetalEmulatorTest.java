package io.gossgpu.metal;

import static io.gossgpu.metal.bindings.goss_metal_h.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.conformance.RequiredBackends;
import io.gossgpu.metal.bindings.goss_metal_h;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The emulated Metal device itself, through the C ABI: barriers really synchronise, simdgroup functions
 * exchange lanes' values, threadgroup memory is shared per threadgroup, and a divergent barrier or simdgroup
 * function is an error of the dispatch rather than a silent wrong answer; the race checks (GOSS_EMU_ORDER,
 * GOSS_EMU_POISON, set in-process through setenv) expose a missing barrier and unwritten threadgroup memory.
 * Runs only with the emulator.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MetalEmulatorTest {
    private final Arena arena = Arena.ofConfined();
    private MemorySegment dev, queue, lib;

    @BeforeAll
    void open() throws IOException {
        Assumptions.assumeTrue(
                MetalBackendProvider.emulatorRequested(),
                "the emulated Metal device is not requested (GOSS_METAL_EMULATOR)");
        RequiredBackends.requireAvailable(new MetalBackendProvider());
        MetalNative.ensureLoaded(true);
        dev = goss_mtl_device_create();
        assertEquals(1, goss_mtl_device_is_emulated(dev));
        queue = goss_mtl_queue_create(dev);
        String src = Files.readString(Path.of("emu/emu_selftest.metal"));
        lib = goss_mtl_library_from_source(dev, arena.allocateFrom(src));
        assertNotEquals(MemorySegment.NULL, lib, () -> MetalNative.lastError());
    }

    @AfterAll
    void close() {
        if (lib != null) goss_mtl_library_release(lib);
        if (queue != null) goss_mtl_queue_release(queue);
        if (dev != null) goss_mtl_device_release(dev);
        arena.close();
    }

    private MemorySegment buffer(int floats) {
        MemorySegment b = goss_mtl_buffer_new(dev, 4L * floats, GOSS_MTL_STORAGE_SHARED);
        assertNotEquals(MemorySegment.NULL, b);
        return b;
    }

    private static MemorySegment host(MemorySegment b, int floats) {
        return goss_mtl_buffer_contents(b).reinterpret(4L * floats);
    }

    private MemorySegment pipeline(String name) {
        MemorySegment p = goss_mtl_pipeline_create(lib, arena.allocateFrom(name));
        assertNotEquals(MemorySegment.NULL, p, () -> MetalNative.lastError());
        return p;
    }

    /** Runs one dispatch; returns the error string or null. */
    private String run(String kernel, int groups, int threads, int tgMemBytes, MemorySegment... buffers) {
        MemorySegment p = pipeline(kernel);
        MemorySegment c = goss_mtl_cmd_begin(queue);
        try {
            goss_mtl_cmd_set_pipeline(c, p);
            for (int i = 0; i < buffers.length; i++) goss_mtl_cmd_set_buffer(c, i, buffers[i], 0);
            if (tgMemBytes > 0) goss_mtl_cmd_set_threadgroup_memory(c, 0, tgMemBytes);
            assertEquals(0, goss_mtl_cmd_dispatch(c, groups, 1, 1, threads, 1, 1));
            return goss_mtl_cmd_commit_wait(c) == 0 ? null : MetalNative.lastError();
        } finally {
            goss_mtl_cmd_release(c);
            goss_mtl_pipeline_release(p);
        }
    }

    @Test
    void barrierSynchronisesThreadgroupMemory() {
        int n = 200;
        MemorySegment in = buffer(n), out = buffer(n);
        for (int i = 0; i < n; i++) host(in, n).setAtIndex(ValueLayout.JAVA_FLOAT, i, i);
        assertEquals(null, run("emu_test_reverse", 1, n, 0, in, out));
        for (int i = 0; i < n; i++) assertEquals(n - 1 - i, host(out, n).getAtIndex(ValueLayout.JAVA_FLOAT, i));
        goss_mtl_buffer_release(in);
        goss_mtl_buffer_release(out);
    }

    @Test
    void dynamicThreadgroupMemoryIsPerThreadgroup() {
        int nt = 64, groups = 3, n = nt * groups;
        MemorySegment in = buffer(n), out = buffer(n);
        for (int i = 0; i < n; i++) host(in, n).setAtIndex(ValueLayout.JAVA_FLOAT, i, i);
        assertEquals(null, run("emu_test_reverse_dynamic", groups, nt, 4 * nt, in, out));
        // reversed twice within each threadgroup, doubled: out = 2·in
        for (int i = 0; i < n; i++) assertEquals(2f * i, host(out, n).getAtIndex(ValueLayout.JAVA_FLOAT, i));
        goss_mtl_buffer_release(in);
        goss_mtl_buffer_release(out);
    }

    @Test
    void simdgroupFunctionsExchangeLanes() {
        int nt = 40; // one full simdgroup and one of 8 lanes
        MemorySegment out = buffer(nt * 6);
        assertEquals(null, run("emu_test_simd", 1, nt, 0, out));
        MemorySegment h = host(out, nt * 6);
        for (int t = 0; t < nt; t++) {
            int lane = t % 32, sg = t / 32, width = sg == 0 ? 32 : 8;
            float sum = width * (width - 1) / 2f;
            assertEquals(sum, h.getAtIndex(ValueLayout.JAVA_FLOAT, t * 6), "simd_sum, thread " + t);
            assertEquals(width - 1, h.getAtIndex(ValueLayout.JAVA_FLOAT, t * 6 + 1), "simd_max, thread " + t);
            assertEquals(1f, h.getAtIndex(ValueLayout.JAVA_FLOAT, t * 6 + 2), "simd_min, thread " + t);
            float down = lane + 3 < width ? lane + 3 : lane; // lanes past the end keep their own value
            assertEquals(down, h.getAtIndex(ValueLayout.JAVA_FLOAT, t * 6 + 3), "simd_shuffle_down, thread " + t);
            assertEquals(
                    (float) sg * width, h.getAtIndex(ValueLayout.JAVA_FLOAT, t * 6 + 4), "simd_sum(int), thread " + t);
            float down1 = lane + 1 < width ? (lane + 1) * 10 : lane * 10;
            assertEquals(
                    down1, h.getAtIndex(ValueLayout.JAVA_FLOAT, t * 6 + 5), "simd_shuffle_down(uint), thread " + t);
        }
        goss_mtl_buffer_release(out);
    }

    @Test
    void divergentBarrierIsAnError() {
        MemorySegment out = buffer(64);
        String err = run("emu_test_divergent_barrier", 2, 64, 0, out);
        assertTrue(err != null && err.contains("deadlock") && err.contains("emu_test_divergent_barrier"), err);
        goss_mtl_buffer_release(out);
    }

    @Test
    void divergentSimdgroupFunctionIsAnError() {
        MemorySegment out = buffer(32);
        String err = run("emu_test_divergent_simd", 1, 32, 0, out);
        assertTrue(err != null && err.contains("divergent simdgroup"), err);
        goss_mtl_buffer_release(out);
    }

    @Test
    void unboundBufferFailsTheDispatch() {
        MemorySegment out = buffer(64);
        String err = run("emu_test_unbound", 1, 64, 0, out);
        assertTrue(err != null && err.contains("[[buffer(1)]] is not bound"), err);
        // a missing threadgroup memory binding is reported the same way
        err = run("emu_test_reverse_dynamic", 1, 32, 0, out, out);
        assertTrue(err != null && err.contains("[[threadgroup(0)]]"), err);
        // and the device still works afterwards
        MemorySegment in = buffer(64);
        assertEquals(null, run("emu_test_reverse", 1, 64, 0, in, out));
        goss_mtl_buffer_release(in);
        goss_mtl_buffer_release(out);
    }

    @Test
    void unknownKernelAndBadSourceAreErrors() {
        assertEquals(MemorySegment.NULL, goss_mtl_pipeline_create(lib, arena.allocateFrom("no_such_kernel")));
        assertTrue(MetalNative.lastError().contains("no_such_kernel"));
        MemorySegment bad = goss_mtl_library_from_source(
                dev, arena.allocateFrom("// x\nKERNEL(not_compiled_in)(BUF(device float *, o, 0)) {}\n"));
        assertEquals(MemorySegment.NULL, bad);
        assertTrue(MetalNative.lastError().contains("not_compiled_in"), MetalNative.lastError());
    }

    @Test
    void oversizedThreadgroupIsAnError() {
        MemorySegment out = buffer(64);
        String err = run("emu_test_reverse", 1, 2048, 0, out, out);
        assertTrue(err != null && err.contains("threads per threadgroup"), err);
        goss_mtl_buffer_release(out);
    }

    /** Sets GOSS_EMU_ORDER and GOSS_EMU_POISON of this process (the emulator reads them at each dispatch). */
    private static void emuEnv(String order, String poison) {
        setenv("GOSS_EMU_ORDER", order);
        setenv("GOSS_EMU_POISON", poison);
    }

    /** Back to what the JVM started with, for the test classes that follow in this fork. */
    private static void restoreEmuEnv() {
        setenv("GOSS_EMU_ORDER", System.getenv("GOSS_EMU_ORDER"));
        setenv("GOSS_EMU_POISON", System.getenv("GOSS_EMU_POISON"));
    }

    private static void setenv(String name, String value) {
        Linker linker = Linker.nativeLinker();
        try (Arena a = Arena.ofConfined()) {
            if (value == null) {
                MethodHandle unset = linker.downcallHandle(
                        linker.defaultLookup().find("unsetenv").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
                assertEquals(0, (int) unset.invokeExact(a.allocateFrom(name)));
            } else {
                MethodHandle set = linker.downcallHandle(
                        linker.defaultLookup().find("setenv").orElseThrow(),
                        FunctionDescriptor.of(
                                ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
                assertEquals(0, (int) set.invokeExact(a.allocateFrom(name), a.allocateFrom(value), 1));
            }
        } catch (Throwable t) {
            throw new AssertionError("cannot set " + name, t);
        }
    }

    /** Runs emu_test_missing_barrier (thread t reads thread t-1's slot with no barrier); counts right and NaN reads. */
    private int[] missingBarrier(String order, String poison, float base) {
        int n = 128;
        MemorySegment in = buffer(n), out = buffer(n);
        try {
            for (int i = 0; i < n; i++) host(in, n).setAtIndex(ValueLayout.JAVA_FLOAT, i, base + i);
            emuEnv(order, poison);
            assertEquals(null, run("emu_test_missing_barrier", 1, n, 4 * n, in, out));
            int right = 0, nan = 0;
            for (int t = 1; t < n; t++) {
                float v = host(out, n).getAtIndex(ValueLayout.JAVA_FLOAT, t);
                if (v == base + t - 1) right++;
                if (Float.isNaN(v)) nan++;
            }
            return new int[] {right, nan};
        } finally {
            restoreEmuEnv();
            goss_mtl_buffer_release(in);
            goss_mtl_buffer_release(out);
        }
    }

    @Test
    void orderOptionExposesAMissingBarrier() {
        assertArrayEquals(new int[] {127, 0}, missingBarrier("forward", "1", 100), "forward order hides it");
        assertArrayEquals(
                new int[] {0, 127}, missingBarrier("reverse", "1", 100), "reverse order reads unwritten slots");
        assertArrayEquals(new int[] {0, 0}, missingBarrier("reverse", "0", 1000), "without poisoning: stale values");
        int[] shuffled = missingBarrier("shuffle:42", "1", 100);
        assertTrue(
                shuffled[0] > 0 && shuffled[1] > 0 && shuffled[0] + shuffled[1] == 127,
                () -> java.util.Arrays.toString(shuffled));
        assertArrayEquals(shuffled, missingBarrier("shuffle:42", "1", 100), "shuffle reproduces with the same seed");
    }

    @Test
    void barriersAndSimdgroupsHoldInEveryOrder() {
        for (String order : new String[] {"reverse", "shuffle:7"}) {
            emuEnv(order, "1");
            try {
                barrierSynchronisesThreadgroupMemory();
                dynamicThreadgroupMemoryIsPerThreadgroup();
                simdgroupFunctionsExchangeLanes();
                divergentBarrierIsAnError();
                divergentSimdgroupFunctionIsAnError();
            } finally {
                restoreEmuEnv();
            }
        }
    }

    @Test
    void poisoningShowsUnwrittenThreadgroupMemoryAsNaN() {
        int nt = 64, groups = 3, n = nt * groups;
        MemorySegment out = buffer(n);
        try {
            for (String poison : new String[] {"1", "0"}) {
                emuEnv("forward", poison);
                assertEquals(null, run("emu_test_unwritten_threadgroup", groups, nt, 0, out));
                for (int g = 0; g < groups; g++) {
                    for (int t = 0; t < nt - 1; t++)
                        assertEquals(1f, host(out, n).getAtIndex(ValueLayout.JAVA_FLOAT, g * nt + t));
                    float last = host(out, n).getAtIndex(ValueLayout.JAVA_FLOAT, g * nt + nt - 1);
                    if (poison.equals("1")) assertTrue(Float.isNaN(last), "threadgroup " + g + " read " + last);
                    else if (g > 0) assertEquals(0f, last, "threadgroup " + g + ": the previous threadgroup's value");
                }
            }
            emuEnv("sideways", "0");
            String err = run("emu_test_reverse", 1, 64, 0, out, out);
            assertTrue(err != null && err.contains("GOSS_EMU_ORDER='sideways'"), err);
        } finally {
            restoreEmuEnv();
            goss_mtl_buffer_release(out);
        }
    }

    @Test
    void abiVersionMatches() {
        assertEquals(goss_metal_h.GOSS_MTL_ABI_VERSION, goss_mtl_abi_version());
    }
}
