package io.gossgpu.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Turns tokens that arrive one at a time into text, emitting a character only once all of its UTF-8 bytes
 * have arrived (a multi-byte character may be split across two or more tokens). Bytes that can never form a
 * valid character are emitted as U+FFFD at once; an incomplete character still pending at the end is emitted
 * as U+FFFD by {@link #flush()}. Special tokens are emitted as their names. Not thread-safe.
 */
public final class StreamingDecoder {
    private final O200kHarmony tok;
    private byte[] pending = new byte[8];
    private int n;

    StreamingDecoder(O200kHarmony tok) {
        this.tok = tok;
    }

    /** Adds one token; returns the text that is now complete (possibly empty). */
    public String accept(int id) {
        byte[] b = tok.tokenBytes(id);
        return acceptBytes(b);
    }

    /** Adds raw bytes (e.g. a token's bytes); returns the text that is now complete (possibly empty). */
    public String acceptBytes(byte[] b) {
        if (n + b.length > pending.length) pending = Arrays.copyOf(pending, Math.max(pending.length * 2, n + b.length));
        System.arraycopy(b, 0, pending, n, b.length);
        n += b.length;
        int keep = incompleteTail(pending, n);
        int emit = n - keep;
        if (emit == 0) return "";
        String s = new String(pending, 0, emit, StandardCharsets.UTF_8);
        System.arraycopy(pending, emit, pending, 0, keep);
        n = keep;
        return s;
    }

    /** True when bytes of an unfinished character are held back. */
    public boolean hasPending() {
        return n > 0;
    }

    /** Emits whatever is held back (an unfinished character becomes U+FFFD) and resets. */
    public String flush() {
        String s = n == 0 ? "" : new String(pending, 0, n, StandardCharsets.UTF_8);
        n = 0;
        return s;
    }

    /**
     * Length of the suffix of b[0..len) that is the valid beginning of a multi-byte UTF-8 character still
     * missing bytes; 0 when the buffer ends on a character boundary or in garbage.
     */
    static int incompleteTail(byte[] b, int len) {
        // a lead byte at most 3 positions back
        for (int back = 1; back <= Math.min(3, len); back++) {
            int c = b[len - back] & 0xFF;
            if ((c & 0xC0) == 0x80) continue; // continuation byte: keep looking for the lead
            int need;
            if (c >= 0xC2 && c <= 0xDF) need = 2;
            else if (c >= 0xE0 && c <= 0xEF) need = 3;
            else if (c >= 0xF0 && c <= 0xF4) need = 4;
            else return 0; // ASCII or invalid lead: nothing to wait for
            if (back >= need) return 0; // complete (or overlong garbage): emit
            // second-byte ranges that keep the sequence valid (no overlongs, surrogates, > U+10FFFF)
            if (back >= 2) {
                int c1 = b[len - back + 1] & 0xFF;
                int lo = 0x80, hi = 0xBF;
                if (c == 0xE0) lo = 0xA0;
                else if (c == 0xED) hi = 0x9F;
                else if (c == 0xF0) lo = 0x90;
                else if (c == 0xF4) hi = 0x8F;
                if (c1 < lo || c1 > hi) return 0;
            }
            return back;
        }
        return 0;
    }
}
