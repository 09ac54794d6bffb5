package io.gossgpu.model.gguf;

import io.gossgpu.quant.LE;
import java.lang.foreign.MemorySegment;
import java.util.AbstractList;
import java.util.RandomAccess;

/**
 * A GGUF metadata array read in place: elements are decoded from the file's bytes when asked for, so a huge
 * array (a 250 MB u8 array, the 201,088 tokens of a vocabulary) costs no heap beyond, for strings, one offset
 * per element. Valid while the checkpoint that read it is open.
 */
final class GgufArray extends AbstractList<Object> implements RandomAccess {
    private final GgufCursor file;
    private final GgufValueType type;
    private final MemorySegment data;
    private final long start;
    private final int size;
    /** Byte offset of each string element (STRING arrays only). */
    private final long[] stringOffsets;

    private GgufArray(
            GgufCursor file, GgufValueType type, MemorySegment data, long start, int size, long[] stringOffsets) {
        this.file = file;
        this.type = type;
        this.data = data;
        this.start = start;
        this.size = size;
        this.stringOffsets = stringOffsets;
    }

    /** Reads past {@code n} elements of fixed-size {@code type} at the cursor and returns them as a view. */
    static GgufArray fixed(GgufCursor in, GgufValueType type, int n, String what) {
        long start = in.position();
        in.skip((long) n * type.minBytes(), what);
        return new GgufArray(in, type, in.data(), start, n, null);
    }

    /** Reads past {@code n} strings at the cursor, remembering where each starts. */
    static GgufArray strings(GgufCursor in, int n, String what) {
        long[] offsets = new long[n];
        for (int i = 0; i < n; i++) {
            offsets[i] = in.position();
            in.skipString(what);
        }
        return new GgufArray(in, GgufValueType.STRING, in.data(), 0, n, offsets);
    }

    @Override
    public Object get(int i) {
        if (i < 0 || i >= size) throw new IndexOutOfBoundsException(i);
        if (stringOffsets != null) return file.at(stringOffsets[i]).string("array element " + i);
        long p = start + (long) i * type.minBytes();
        return switch (type) {
            case UINT8 -> (short) (data.get(LE.U8, p) & 0xff);
            case INT8 -> data.get(LE.U8, p);
            case UINT16 -> data.get(LE.I16, p) & 0xffff;
            case INT16 -> data.get(LE.I16, p);
            case UINT32 -> Integer.toUnsignedLong(data.get(LE.I32, p));
            case INT32 -> data.get(LE.I32, p);
            case FLOAT32 -> data.get(LE.F32, p);
            case BOOL -> data.get(LE.U8, p) != 0;
            case UINT64, INT64 -> data.get(LE.I64, p);
            case FLOAT64 -> data.get(LE.F64, p);
            case STRING, ARRAY -> throw new IllegalStateException(type.toString());
        };
    }

    @Override
    public int size() {
        return size;
    }
}
