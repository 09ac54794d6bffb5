package io.gossgpu.model.gguf;

import io.gossgpu.model.Json;
import io.gossgpu.model.ModelFormatException;
import io.gossgpu.quant.LE;
import java.lang.foreign.MemorySegment;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Path;

/**
 * Reads little-endian values from the front of a GGUF file, checking every read against the end of
 * the file first: a truncated or corrupt header is a {@link ModelFormatException} saying what was
 * being read, never an out-of-bounds exception.
 */
final class GgufCursor {
    private final MemorySegment data;
    private final Path file;
    private long pos;

    GgufCursor(MemorySegment data, Path file) {
        this.data = data;
        this.file = file;
    }

    long position() {
        return pos;
    }

    long remaining() {
        return data.byteSize() - pos;
    }

    Path file() {
        return file;
    }

    private long take(long n, String what) {
        if (n < 0 || n > remaining())
            throw fail("truncated: " + what + " needs " + Long.toUnsignedString(n) + " bytes at offset " + pos
                    + " but the file ends at " + data.byteSize());
        long p = pos;
        pos += n;
        return p;
    }

    MemorySegment data() {
        return data;
    }

    /** A cursor on the same bytes at {@code position}. */
    GgufCursor at(long position) {
        GgufCursor c = new GgufCursor(data, file);
        c.pos = position;
        return c;
    }

    void skip(long n, String what) {
        take(n, what);
    }

    /** Moves past a string without decoding it. */
    void skipString(String what) {
        long len = i64(what + " length");
        if (len < 0 || len > remaining())
            throw fail("truncated or corrupt: " + what + " of length " + Long.toUnsignedString(len) + " at offset "
                    + (pos - 8) + " runs past the end of the file (" + data.byteSize() + " bytes)");
        take(len, what);
    }

    int u8(String what) {
        return data.get(LE.U8, take(1, what)) & 0xff;
    }

    byte i8(String what) {
        return data.get(LE.U8, take(1, what));
    }

    short i16(String what) {
        return data.get(LE.I16, take(2, what));
    }

    int i32(String what) {
        return data.get(LE.I32, take(4, what));
    }

    long u32(String what) {
        return Integer.toUnsignedLong(i32(what));
    }

    long i64(String what) {
        return data.get(LE.I64, take(8, what));
    }

    float f32(String what) {
        return data.get(LE.F32, take(4, what));
    }

    double f64(String what) {
        return data.get(LE.F64, take(8, what));
    }

    /**
     * A count that precedes {@code minBytesEach}-byte items: rejected when the items could not fit in
     * the rest of the file, so a corrupt count never drives a large allocation or a long loop.
     */
    long count(long raw, long minBytesEach, String what) {
        if (raw < 0 || raw > remaining() / Math.max(1, minBytesEach))
            throw fail(what + " " + Long.toUnsignedString(raw) + " cannot fit in the " + remaining()
                    + " bytes left in the file (corrupt or truncated)");
        return raw;
    }

    /** A GGUF string: u64 byte length (u32 in GGUF v1, not read here) then UTF-8 bytes. */
    String string(String what) {
        long len = i64(what + " length");
        if (len < 0 || len > remaining())
            throw fail("truncated or corrupt: " + what + " of length " + Long.toUnsignedString(len) + " at offset "
                    + (pos - 8) + " runs past the end of the file (" + data.byteSize() + " bytes)");
        if (len > Integer.MAX_VALUE - 8) throw fail(what + " of " + len + " bytes is too long");
        long p = take(len, what);
        byte[] bytes = data.asSlice(p, len).toArray(LE.U8);
        try {
            return Json.strictUtf8(bytes);
        } catch (CharacterCodingException e) {
            throw fail(what + " at offset " + p + " is not valid UTF-8");
        }
    }

    ModelFormatException fail(String message) {
        return new ModelFormatException(file, message);
    }
}
