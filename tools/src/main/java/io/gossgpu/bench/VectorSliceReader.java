package io.gossgpu.bench;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/** {@link ReadBandwidth}'s reader with Vector API loads; loaded only when jdk.incubator.vector is present. */
final class VectorSliceReader implements ReadBandwidth.SliceReader {
    private static final VectorSpecies<Long> S = LongVector.SPECIES_PREFERRED;

    @Override
    public long read(MemorySegment m, long from, long to) {
        LongVector a = LongVector.zero(S), b = a, c = a, d = a;
        long step = S.vectorByteSize();
        long off = from;
        for (; off + 4 * step <= to; off += 4 * step) {
            a = a.add(LongVector.fromMemorySegment(S, m, off, ByteOrder.LITTLE_ENDIAN));
            b = b.add(LongVector.fromMemorySegment(S, m, off + step, ByteOrder.LITTLE_ENDIAN));
            c = c.add(LongVector.fromMemorySegment(S, m, off + 2 * step, ByteOrder.LITTLE_ENDIAN));
            d = d.add(LongVector.fromMemorySegment(S, m, off + 3 * step, ByteOrder.LITTLE_ENDIAN));
        }
        long s = a.add(b).add(c).add(d).reduceLanes(VectorOperators.ADD);
        for (; off < to; off += 8) s += m.get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, off);
        return s;
    }

    @Override
    public String method() {
        return S.vectorBitSize() + "-bit Vector API loads";
    }
}
