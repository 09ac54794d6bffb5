package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.device.KernelParams;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** The kernelParams packing, checked without a GPU: kernelParams[i] must point at argument i's value. */
class KernelArgsTest {
    /** 32 bytes in C: a at 0, b at 8 (after 4 bytes of padding), c at 16, d at 20, e at 24, then 4 bytes of padding. */
    record WideParams(int a, long b, float c, int d, float e) implements KernelParams {}

    record SmallParams(int n) implements KernelParams {}
    /** 128 bytes: 16 slots. */
    record BigParams(
            long a0,
            long a1,
            long a2,
            long a3,
            long a4,
            long a5,
            long a6,
            long a7,
            long a8,
            long a9,
            long a10,
            long a11,
            long a12,
            long a13,
            long a14,
            long a15)
            implements KernelParams {
        BigParams(long v) {
            this(v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v);
        }
    }

    private static long pointer(KernelArgs args, int i) {
        return args.kernelParams().getAtIndex(ValueLayout.ADDRESS, i).address();
    }

    private static byte[] bytes(KernelParams p) {
        try (Arena arena = Arena.ofConfined()) {
            return p.writeTo(arena.allocate(p.byteSize(), 8)).toArray(ValueLayout.JAVA_BYTE);
        }
    }

    @Test
    void aStructTakesConsecutiveSlotsAndTheNextArgumentFollowsIt() {
        WideParams w = new WideParams(-3, 1L << 40, 2.5f, 77, 1e-5f);
        assertEquals(32, w.byteSize());
        KernelArgs args = new KernelArgs().ptr(0x1000L).params(w).ptr(0x2000L);
        assertEquals(3, args.count());
        assertEquals(WideParams.class, args.paramsType());
        long base = pointer(args, 0);
        assertEquals(0, base % 8, "slot alignment");
        assertEquals(base + 8, pointer(args, 1), "the struct starts in the slot after the pointer");
        assertEquals(base + 8 + 32, pointer(args, 2), "the next argument after the struct's 4 slots");
        for (int i = 0; i < 3; i++)
            assertEquals(args.valueSlot(i).address(), pointer(args, i), "kernelParams[" + i + "]");
        assertEquals(0x1000L, args.valueSlot(0).get(ValueLayout.JAVA_LONG, 0));
        assertArrayEquals(bytes(w), args.valueSlot(1).toArray(ValueLayout.JAVA_BYTE), "the struct's bytes in C layout");
        MemorySegment s = args.valueSlot(1);
        assertEquals(-3, s.get(ValueLayout.JAVA_INT, 0));
        assertEquals(1L << 40, s.get(ValueLayout.JAVA_LONG, 8));
        assertEquals(2.5f, s.get(ValueLayout.JAVA_FLOAT, 16));
        assertEquals(77, s.get(ValueLayout.JAVA_INT, 20));
        assertEquals(1e-5f, s.get(ValueLayout.JAVA_FLOAT, 24));
        assertEquals(0x2000L, args.valueSlot(2).get(ValueLayout.JAVA_LONG, 0));
    }

    @Test
    void aSmallStructAfterALargeOneLeavesNoStaleBytes() {
        KernelArgs args = new KernelArgs().ptr(1L).params(new WideParams(-1, -1L, Float.NaN, -1, Float.NaN));
        args.clear().ptr(1L).params(new SmallParams(5)).ptr(2L);
        assertEquals(3, args.count());
        assertEquals(5L, args.valueSlot(1).get(ValueLayout.JAVA_LONG, 0), "the struct's slot, padding zeroed");
        assertEquals(pointer(args, 0) + 16, pointer(args, 2), "pointers rebuilt for the new shape");
        assertEquals(2L, args.valueSlot(2).get(ValueLayout.JAVA_LONG, 0));
    }

    @Test
    void savedArgumentsWithAStructComeBackWithTheirPointers() {
        KernelArgs args = new KernelArgs().ptr(0xabcL).ptr(0xdefL).params(new WideParams(1, 2L, 3f, 4, 5f));
        KernelArgs.Saved saved = args.save();
        assertEquals(
                saved,
                new KernelArgs()
                        .ptr(0xabcL)
                        .ptr(0xdefL)
                        .params(new WideParams(1, 2L, 3f, 4, 5f))
                        .save());
        assertNotEquals(
                saved,
                new KernelArgs()
                        .ptr(0xabcL)
                        .ptr(0xdefL)
                        .params(new WideParams(1, 2L, 3f, 4, 6f))
                        .save());
        assertNotEquals(
                saved,
                new KernelArgs()
                        .ptr(0xabcL)
                        .ptr(0xdefL)
                        .i32(1)
                        .i64(2L)
                        .f32(3f)
                        .i32(4)
                        .f32(5f)
                        .save(),
                "the same bytes as separate arguments are another launch");

        KernelArgs replay =
                new KernelArgs().params(new SmallParams(9)).ptr(1L).ptr(2L).ptr(3L);
        replay.restore(saved);
        assertEquals(3, replay.count());
        assertEquals(WideParams.class, replay.paramsType());
        for (int i = 0; i < 3; i++)
            assertEquals(replay.valueSlot(i).address(), pointer(replay, i), "kernelParams[" + i + "]");
        assertEquals(pointer(replay, 0) + 16, pointer(replay, 2));
        assertEquals(0xdefL, replay.valueSlot(1).get(ValueLayout.JAVA_LONG, 0));
        assertArrayEquals(
                bytes(new WideParams(1, 2L, 3f, 4, 5f)), replay.valueSlot(2).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(saved, replay.save());
    }

    @Test
    void tooManyBytesIsAClearError() {
        KernelArgs args = new KernelArgs();
        for (int i = 0; i < KernelArgs.MAX_BYTES / 128; i++) args.params(new BigParams(i));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> args.ptr(0L));
        assertEquals(
                "a CUDA kernel launch takes at most " + KernelArgs.MAX_ARGS + " arguments of " + KernelArgs.MAX_BYTES
                        + " bytes in all",
                e.getMessage());
    }

    @Test
    void aLaunchIsCheckedAgainstItsEntry() {
        CudaEntry rms = DenseLauncher.RMSNORM;
        rms.check(new KernelArgs()
                .ptr(1L)
                .ptr(2L)
                .ptr(3L)
                .params(new io.gossgpu.device.OpParams.NormParams(2880, 1e-5f)));
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> rms.check(
                        new KernelArgs().ptr(1L).ptr(2L).ptr(3L).i32(2880).f32(1e-5f)));
        assertEquals(
                "CUDA kernel rmsnorm takes 3 buffers and a NormParams; the launch passed 5 arguments and no params struct",
                e.getMessage());
        e = assertThrows(
                IllegalArgumentException.class,
                () -> rms.check(
                        new KernelArgs().ptr(1L).ptr(2L).ptr(3L).params(new io.gossgpu.device.OpParams.AddParams(5))));
        assertEquals(
                "CUDA kernel rmsnorm takes 3 buffers and a NormParams; the launch passed 4 arguments, the struct a AddParams",
                e.getMessage());
    }

    @Test
    void eachArgumentHasItsOwnSlotAndPointer() {
        KernelArgs args = new KernelArgs()
                .ptr(0x7f00_1234_5678L)
                .i32(-7)
                .f32(1e-5f)
                .i64(1L << 40)
                .f64(Math.PI);
        assertEquals(5, args.count());
        MemorySegment params = args.kernelParams();
        for (int i = 0; i < args.count(); i++) {
            MemorySegment p = params.getAtIndex(ValueLayout.ADDRESS, i);
            assertEquals(args.valueSlot(i).address(), p.address(), "kernelParams[" + i + "]");
            assertEquals(0, p.address() % 8, "slot alignment");
        }
        assertEquals(0x7f00_1234_5678L, args.valueSlot(0).get(ValueLayout.JAVA_LONG, 0));
        assertEquals(-7, args.valueSlot(1).get(ValueLayout.JAVA_INT, 0));
        assertEquals(1e-5f, args.valueSlot(2).get(ValueLayout.JAVA_FLOAT, 0));
        assertEquals(1L << 40, args.valueSlot(3).get(ValueLayout.JAVA_LONG, 0));
        assertEquals(Math.PI, args.valueSlot(4).get(ValueLayout.JAVA_DOUBLE, 0));
    }

    @Test
    void clearReusesTheSlotsAndZeroesTheUpperHalf() {
        KernelArgs args = new KernelArgs().i64(-1L);
        args.clear().i32(5);
        assertEquals(1, args.count());
        // a 4-byte argument never leaves stale bytes in its slot
        assertEquals(5L, args.valueSlot(0).get(ValueLayout.JAVA_LONG, 0));
    }

    @Test
    void boxedArgumentsMapToCTypes() {
        KernelArgs args = new KernelArgs().add(3, 4L, 2.5f, 0.25, new SmallParams(6));
        assertEquals(3, args.valueSlot(0).get(ValueLayout.JAVA_INT, 0));
        assertEquals(4L, args.valueSlot(1).get(ValueLayout.JAVA_LONG, 0));
        assertEquals(2.5f, args.valueSlot(2).get(ValueLayout.JAVA_FLOAT, 0));
        assertEquals(0.25, args.valueSlot(3).get(ValueLayout.JAVA_DOUBLE, 0));
        assertEquals(6, args.valueSlot(4).get(ValueLayout.JAVA_INT, 0));
        assertEquals(SmallParams.class, args.paramsType());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new KernelArgs().add("x"));
        assertTrue(e.getMessage().contains("unsupported type java.lang.String"), e.getMessage());
    }

    @Test
    void tooManyArgumentsIsAClearError() {
        KernelArgs args = new KernelArgs();
        for (int i = 0; i < KernelArgs.MAX_ARGS; i++) {
            args.i32(i);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> args.i32(0));
        assertEquals(
                "a CUDA kernel launch takes at most " + KernelArgs.MAX_ARGS + " arguments of " + KernelArgs.MAX_BYTES
                        + " bytes in all",
                e.getMessage());
    }
}
