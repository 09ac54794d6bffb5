package io.gossgpu.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The probe's bookkeeping, on a small buffer (no speed is asserted: the machine is shared). */
class ReadBandwidthTest {
    @Test
    void splitsTheBufferIntoWholeCacheLinesPerThreadAndSaysHowItRead() {
        ReadBandwidth.Result r = ReadBandwidth.measure(3, 10_000_000, 2, 0);
        assertEquals(3, r.threads());
        assertEquals(9_999_936, r.bytes()); // rounded down to 3 slices of whole 64-byte lines
        assertEquals(2, r.passes()); // no time asked for beyond the 2 passes
        assertTrue(r.gbPerSecond() > 0 && Double.isFinite(r.gbPerSecond()), r.describe());
        // the tests run with jdk.incubator.vector (see the surefire argLine), so the vector loads are used
        assertTrue(r.method().endsWith("-bit Vector API loads"), r.method());
        assertTrue(
                r.describe()
                        .startsWith(String.format(
                                java.util.Locale.ROOT,
                                "%.1f GB/s (3 threads reading a 0.0 GiB buffer",
                                r.gbPerSecond())),
                r.describe());
    }

    @Test
    void keepsPassingUntilTheTimeAskedForHasGoneByOrThePassCapIsReached() {
        long t0 = System.nanoTime();
        ReadBandwidth.Result r = ReadBandwidth.measure(1, 16 << 20, 3, 0.3);
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertTrue(r.passes() >= 3 && r.passes() <= ReadBandwidth.MAX_PASSES, "passes " + r.passes());
        assertTrue(
                seconds >= 0.3 || r.passes() == ReadBandwidth.MAX_PASSES, r.passes() + " passes in " + seconds + " s");
        // with no time asked for, exactly the minimum
        assertEquals(5, ReadBandwidth.measure(2, 16 << 20, 5, 0).passes());
    }

    @Test
    void bothReadersSumTheSameLongs() {
        java.lang.foreign.MemorySegment m = java.lang.foreign.Arena.ofAuto().allocate(4096 + 64, 64);
        for (long i = 0; i < m.byteSize() / 8; i++)
            m.set(java.lang.foreign.ValueLayout.JAVA_LONG, 8 * i, i * 0x9E3779B97F4A7C15L);
        long expected = 0;
        for (long i = 8; i < 4096 / 8; i++) expected += i * 0x9E3779B97F4A7C15L;
        // 4032 bytes: not a whole number of the vector loop's 4-vector steps, so its tail runs too
        assertEquals(expected, new ReadBandwidth.LongSliceReader().read(m, 64, 4096));
        assertEquals(expected, new VectorSliceReader().read(m, 64, 4096));
    }

    @Test
    void rejectsNonsense() {
        assertThrows(IllegalArgumentException.class, () -> ReadBandwidth.measure(0, 1 << 20, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> ReadBandwidth.measure(4, 100, 1, 0));
    }
}
