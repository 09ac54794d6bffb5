package io.gossgpu.api;

import io.gossgpu.tokenizer.O200kHarmony;
import io.gossgpu.tokenizer.StreamingDecoder;

/**
 * The gpt-oss tokenizer (o200k_harmony) as applications use it: text to token ids and back, a token's bytes, whether
 * an id is one of the harmony format's special tokens. The same vocabulary for every gpt-oss checkpoint.
 */
public final class Tokens {
    /** Token ids are {@code 0 .. VOCAB_SIZE − 1}. */
    public static final int VOCAB_SIZE = O200kHarmony.VOCAB_SIZE;

    private Tokens() {}

    /** Plain text to ids: special tokens' text is encoded as ordinary text. */
    public static int[] encode(String text) {
        return O200kHarmony.get().encode(text);
    }

    /** Text to ids with the harmony special tokens ({@code <|start|>}, …) recognised as such. */
    public static int[] encodeWithSpecials(String text) {
        return O200kHarmony.get().encodeWithSpecials(text);
    }

    /** Ids to text (UTF-8, invalid sequences replaced). */
    public static String decode(int... ids) {
        return O200kHarmony.get().decode(ids);
    }

    /** The bytes of one token (a piece of UTF-8, possibly not a whole character). */
    public static byte[] tokenBytes(int id) {
        return O200kHarmony.get().tokenBytes(id);
    }

    /** Ids in, text out, as they come: a character's bytes are held back until it is whole. */
    public interface TextDecoder {
        /** The text that {@code id} completes (empty while a character's bytes are still coming). */
        String accept(int id);

        /** What is held back, with invalid sequences replaced; the decoder is empty afterwards. */
        String flush();
    }

    /** A decoder of a stream of ids into text that holds back a character's bytes until it is whole. */
    public static TextDecoder newStreamingDecoder() {
        StreamingDecoder d = O200kHarmony.get().newStreamingDecoder();
        return new TextDecoder() {
            @Override
            public String accept(int id) {
                return d.accept(id);
            }

            @Override
            public String flush() {
                return d.flush();
            }
        };
    }

    /** Whether {@code id} is a harmony special token. */
    public static boolean isSpecial(int id) {
        return O200kHarmony.get().isSpecial(id);
    }
}
