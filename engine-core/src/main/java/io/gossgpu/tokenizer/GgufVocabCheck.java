package io.gossgpu.tokenizer;

import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Optional;

/**
 * Compares a GGUF file's {@code tokenizer.ggml.tokens} list with the built-in o200k_harmony vocabulary.
 * GGUF (like GPT-2's vocab.json) stores each ordinary token as a string in which every byte is replaced by
 * a printable code point (the GPT-2 "bytes to unicode" table); special tokens are stored as their names.
 */
public final class GgufVocabCheck {
    private GgufVocabCheck() {}

    private static final int[] BYTE_TO_CP = new int[256];
    private static final int[] CP_TO_BYTE = new int[512];

    static {
        java.util.Arrays.fill(CP_TO_BYTE, -1);
        int extra = 0;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            int cp = printable ? b : 256 + extra++;
            BYTE_TO_CP[b] = cp;
            CP_TO_BYTE[cp] = b;
        }
    }

    /** The GGUF key of the file's own token list. */
    public static final String TOKENS_KEY = "tokenizer.ggml.tokens";

    /**
     * One line about the vocabulary a model file carries in its {@code metadata} (starting with {@code DISAGREES} when
     * it differs from the built-in o200k_harmony tokenizer), or empty when it carries none (safetensors, bare GGUFs).
     */
    public static Optional<String> describe(java.util.Map<String, Object> metadata) {
        if (!(metadata.get(TOKENS_KEY) instanceof List<?> list)) return Optional.empty();
        if (!list.stream().allMatch(String.class::isInstance))
            return Optional.of("the file's " + TOKENS_KEY + " is not a list of strings; it is ignored");
        @SuppressWarnings("unchecked")
        List<String> tokens = (List<String>) list;
        return Optional.of(firstDisagreement(tokens, O200kHarmony.get())
                .map(d -> "DISAGREES with the built-in o200k_harmony tokenizer, which goss-gpu uses: " + d)
                .orElse("the file's " + tokens.size() + " tokens agree with the built-in o200k_harmony tokenizer"));
    }

    /** The GPT-2 byte-level string of some bytes (what GGUF stores for an ordinary token). */
    public static String toByteLevel(byte[] bytes) {
        StringBuilder sb = new StringBuilder(bytes.length);
        for (byte b : bytes) sb.appendCodePoint(BYTE_TO_CP[b & 0xFF]);
        return sb.toString();
    }

    /** The bytes of a GPT-2 byte-level string, or empty when it holds a code point outside the table. */
    public static Optional<byte[]> fromByteLevel(String s) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            if (cp >= CP_TO_BYTE.length || CP_TO_BYTE[cp] < 0) return Optional.empty();
            out.write(CP_TO_BYTE[cp]);
        }
        return Optional.of(out.toByteArray());
    }

    /** The built-in vocabulary as a GGUF {@code tokenizer.ggml.tokens} list holds it (byte-level strings, specials by name). */
    public static List<String> ggufTokenList(O200kHarmony tok) {
        List<String> out = new java.util.ArrayList<>(O200kHarmony.VOCAB_SIZE);
        for (int id = 0; id < O200kHarmony.VOCAB_SIZE; id++)
            out.add(tok.isSpecial(id) ? tok.specialName(id).orElseThrow() : toByteLevel(tok.tokenBytes(id)));
        return out;
    }

    /**
     * Checks a GGUF token list against the built-in vocabulary. Returns empty when they agree, otherwise a
     * one-line description of the first disagreement (token id, what the file has, what was expected).
     */
    public static Optional<String> firstDisagreement(List<String> ggufTokens, O200kHarmony tok) {
        int n = Math.min(ggufTokens.size(), O200kHarmony.VOCAB_SIZE);
        for (int id = 0; id < n; id++) {
            String s = ggufTokens.get(id);
            if (s == null) return Optional.of("token " + id + ": missing in the GGUF token list");
            if (tok.isSpecial(id)) {
                String name = tok.specialName(id).orElseThrow();
                boolean ok = s.equals(name) || (id == O200kHarmony.END_OF_PROMPT && s.equals("<|reserved_200018|>"));
                if (!ok)
                    return Optional.of("token " + id + ": GGUF has " + quote(s) + ", expected special " + quote(name));
            } else {
                byte[] want = tok.tokenBytes(id);
                Optional<byte[]> got = fromByteLevel(s);
                if (got.isEmpty() || !java.util.Arrays.equals(got.get(), want))
                    return Optional.of(
                            "token " + id + ": GGUF has " + quote(s) + ", expected " + quote(toByteLevel(want)));
            }
        }
        if (ggufTokens.size() != O200kHarmony.VOCAB_SIZE)
            return Optional.of("GGUF has " + ggufTokens.size() + " tokens, expected " + O200kHarmony.VOCAB_SIZE
                    + " (the first " + n + " agree)");
        return Optional.empty();
    }

    private static String quote(String s) {
        StringBuilder sb = new StringBuilder("\"");
        s.codePoints().forEach(cp -> {
            if (cp < 0x20 || cp == '"' || cp == '\\' || cp > 0x7E) sb.append(String.format("\\u{%X}", cp));
            else sb.appendCodePoint(cp);
        });
        return sb.append('"').toString();
    }
}
