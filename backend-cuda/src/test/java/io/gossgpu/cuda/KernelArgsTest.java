package io.gossgpu.cuda;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The kernelParams packing, checked without a GPU: kernelParams[i] must point at argument i's value. */
class KernelArgsTest {

    @Test
    void eachArgumentHasItsOwnSlotAndPointer() {
        KernelArgs args = new KernelArgs().ptr(0x7f00_1234_5678L).i32(-7).f32(1e-5f).i64(1L << 40).f64(Math.PI);
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
        KernelArgs args = new KernelArgs().add(3, 4L, 2.5f, 0.25);
        assertEquals(3, args.valueSlot(0).get(ValueLayout.JAVA_INT, 0));
        assertEquals(4L, args.valueSlot(1).get(ValueLayout.JAVA_LONG, 0));
        assertEquals(2.5f, args.valueSlot(2).get(ValueLayout.JAVA_FLOAT, 0));
        assertEquals(0.25, args.valueSlot(3).get(ValueLayout.JAVA_DOUBLE, 0));
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
        assertEquals("a CUDA kernel launch takes at most " + KernelArgs.MAX_ARGS + " arguments", e.getMessage());
    }
}
