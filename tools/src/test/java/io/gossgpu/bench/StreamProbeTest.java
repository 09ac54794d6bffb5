package io.gossgpu.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gossgpu.cpu.matmul.NativeCpu;
import org.junit.jupiter.api.Test;

/** The C streaming probe's bookkeeping on a small buffer (no speed is asserted: the machine is shared). */
class StreamProbeTest {
    @Test
    void readsWholePagesPerThreadWithAvx2LoadsAndSaysSo() {
        assumeTrue(
                NativeCpu.unavailableReason() == null,
                "the native cpu kernels cannot run here: " + NativeCpu.unavailableReason());
        ReadBandwidth.Result r = StreamProbe.measure(3, 10_000_000, 2);
        assertEquals(3, r.threads());
        assertEquals(3 * 3 * 4096 * 271, r.bytes(), "3 slices of 813 whole 4 KiB pages"); // 10^7 / 3 / 4096 = 813.8
        assertEquals(2, r.passes());
        assertTrue(r.gbPerSecond() > 0 && Double.isFinite(r.gbPerSecond()), r.describe());
        assertEquals("256-bit AVX2 loads in C", r.method(), "every machine the native kernels run on has AVX2");
        assertTrue(
                r.describe()
                        .startsWith(String.format(
                                java.util.Locale.ROOT,
                                "%.1f GB/s (3 threads reading a 0.0 GiB buffer with 256-bit AVX2 loads in C, best of 2 passes",
                                r.gbPerSecond())),
                r.describe());
    }

    @Test
    void anOpenProbeMeasuresPassAfterPassUntilClosed() {
        assumeTrue(
                NativeCpu.unavailableReason() == null,
                "the native cpu kernels cannot run here: " + NativeCpu.unavailableReason());
        StreamProbe.Open p = StreamProbe.open(2, 8 << 20);
        try (p) {
            for (int i = 0; i < 3; i++) {
                double gbps = p.pass();
                assertTrue(gbps > 0 && Double.isFinite(gbps), "pass " + i + ": " + gbps);
            }
        }
        assertThrows(IllegalStateException.class, p::pass, "closed: its buffer is freed");
        p.close(); // twice is harmless
        assertThrows(IllegalArgumentException.class, () -> StreamProbe.open(2, 4096));
    }

    @Test
    void theBufferIsFourGibOrAQuarterOfTheFreeMemory() {
        assertEquals(4L << 30, StreamProbe.bytesFor(64L << 30));
        assertEquals(2L << 30, StreamProbe.bytesFor(8L << 30));
        assertEquals(256L << 20, StreamProbe.bytesFor(100L << 20));
        assertEquals(4L << 30, StreamProbe.bytesFor(-1), "unknown: the default");
    }

    @Test
    void rejectsNonsense() {
        assertThrows(IllegalArgumentException.class, () -> StreamProbe.measure(0, 1 << 20, 1));
        assertThrows(IllegalArgumentException.class, () -> StreamProbe.measure(2, 4096, 1));
        assertThrows(IllegalArgumentException.class, () -> StreamProbe.measure(1, 1 << 20, 65));
    }
}
