package io.gossgpu.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

class KernelParamsTest {
    record NormParams(int n, float eps) implements KernelParams {}

    record SpanParams(int count, long offset, float scale) implements KernelParams {}

    record BadParams(boolean x) implements KernelParams {}

    record DrawParams(int row, double temperature) implements KernelParams {}

    @Test
    void theLayoutIsCs() {
        assertEquals(8, KernelParams.layout(NormParams.class).byteSize());
        // int at 0, long at 8 (aligned to its size), float at 16, padded to a multiple of 8
        var span = KernelParams.layout(SpanParams.class);
        assertEquals(24, span.byteSize());
        assertEquals(8, span.byteOffset(java.lang.foreign.MemoryLayout.PathElement.groupElement("offset")));
        assertEquals(16, span.byteOffset(java.lang.foreign.MemoryLayout.PathElement.groupElement("scale")));
        assertThrows(IllegalArgumentException.class, () -> KernelParams.layout(BadParams.class));
        assertEquals(16, KernelParams.layout(DrawParams.class).byteSize());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dst = arena.allocate(16);
            new DrawParams(3, 0.7).writeTo(dst);
            assertEquals(0.7, dst.get(ValueLayout.JAVA_DOUBLE, 8));
        }
    }

    @Test
    void writeToPutsEachFieldAtItsOffsetAndZeroesThePadding() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dst = arena.allocate(32).fill((byte) 0x5a);
            MemorySegment out = new SpanParams(7, 1L << 40, 0.5f).writeTo(dst);
            assertEquals(24, out.byteSize());
            assertEquals(7, dst.get(ValueLayout.JAVA_INT, 0));
            assertEquals(0, dst.get(ValueLayout.JAVA_INT, 4));
            assertEquals(1L << 40, dst.get(ValueLayout.JAVA_LONG, 8));
            assertEquals(0.5f, dst.get(ValueLayout.JAVA_FLOAT, 16));
            assertEquals(0, dst.get(ValueLayout.JAVA_INT, 20));
            assertEquals(0x5a, dst.get(ValueLayout.JAVA_BYTE, 24)); // nothing past the struct
        }
    }

    @Test
    void theCheckReadsStructsAndCatchesAMismatch() {
        String src = """
                // a comment: struct IgnoredParams { int x; };
                struct NormParams { uint n; float eps; };
                typedef struct { int count; long offset; float scale; } SpanParams;
                struct DrawParams { int row; double temperature; };
                struct Helper { int y; };
                """;
        assertEquals(
                List.of(new KernelParamsCheck.Field("int", "n"), new KernelParamsCheck.Field("float", "eps")),
                KernelParamsCheck.structs(src).get("NormParams"));
        KernelParamsCheck.assertMirrors(src, List.of(NormParams.class, SpanParams.class, DrawParams.class));
        // fields swapped, a record missing
        assertThrows(
                AssertionError.class,
                () -> KernelParamsCheck.assertMirrors(
                        src.replace("uint n; float eps;", "float eps; uint n;"),
                        List.of(NormParams.class, SpanParams.class, DrawParams.class)));
        assertThrows(AssertionError.class, () -> KernelParamsCheck.assertMirrors(src, List.of(NormParams.class)));
    }

    @Test
    void recordsInFindsTheNestedRecordsOfAPackage() {
        var found = KernelParamsCheck.recordsIn(KernelParamsTest.class);
        assertEquals(
                true,
                found.containsAll(List.of(NormParams.class, SpanParams.class, BadParams.class)),
                found.toString());
    }
}
