package io.gossgpu.constrain;

import io.gossgpu.tokenizer.O200kHarmony;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The assistant headers a constrained turn may write, as a byte trie whose states are its nodes: the analysis
 * channel (first message only), the final channel (unless the turn must call), and {@code functions.NAME} for each
 * declared function, with the recipient before or after the channel and the content types the model writes
 * ({@code json}, {@code <|constrain|>json}, {@code <|constrain|> json}). The header's special tokens are single
 * bytes that no ordinary token may stand for (UTF-8 never uses 0xF8..0xFB), so {@code <|channel|>} spelled in plain
 * text is refused.
 */
final class HarmonyHeaders {
    static final int CHANNEL = 0xf8, CONSTRAIN = 0xf9, MESSAGE = 0xfa, START = 0xfb;
    private static final int[] SPECIALS = {
        O200kHarmony.CHANNEL, O200kHarmony.CONSTRAIN, O200kHarmony.MESSAGE, O200kHarmony.START
    };
    private static final String[] CONTENT_TYPES = {
        "", " json", "\u00f9json", " \u00f9json", "\u00f9 json", " \u00f9 json"
    };

    private final KeyTrie trie;
    private final Map<Integer, long[]> masks = new HashMap<>();
    /** Steps ordinary tokens' bytes; the special tokens' bytes are refused. */
    private final ByteMatcher text = new ByteMatcher() {
        @Override
        public Object start() {
            return 0;
        }

        @Override
        public Object step(Object state, int b) {
            if (b >= CHANNEL && b <= START) return null;
            int c = trie.child((Integer) state, b);
            return c < 0 ? null : c;
        }

        @Override
        public boolean canEnd(Object state) {
            return false;
        }
    };

    /**
     * @param afterEnd   whether the header starts with {@code <|start|>assistant} (a message ended before it); else
     *                   the prompt has written those and the analysis channel may still come
     * @param answer     whether the final channel may come (else only calls)
     * @param functions  the declared functions a header may address
     */
    HarmonyHeaders(boolean afterEnd, boolean answer, Set<String> functions) {
        List<String> headers = new ArrayList<>();
        String head = afterEnd ? (char) START + "assistant" : "";
        String ch = String.valueOf((char) CHANNEL), msg = String.valueOf((char) MESSAGE);
        if (!afterEnd) headers.add(head + ch + "analysis" + msg);
        for (String type : CONTENT_TYPES) {
            String t = type.replace('\u00f9', (char) CONSTRAIN);
            if (answer) headers.add(head + ch + "final" + t + msg);
            for (String f : functions) {
                headers.add(head + ch + "commentary to=functions." + f + t + msg);
                headers.add(head + " to=functions." + f + ch + "commentary" + t + msg);
            }
        }
        List<byte[]> bytes = new ArrayList<>();
        for (String h : headers) bytes.add(encode(h));
        trie = new KeyTrie(bytes);
    }

    /** {@code s} as bytes: chars 0xF8..0xFB as those bytes, the rest as UTF-8. */
    private static byte[] encode(String s) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (char c : s.toCharArray()) {
            if (c >= CHANNEL && c <= START) out.write(c);
            else out.writeBytes(String.valueOf(c).getBytes(StandardCharsets.UTF_8));
        }
        return out.toByteArray();
    }

    int start() {
        return 0;
    }

    /** The node after {@code token}, or -1 when no header goes on with it. */
    int step(int node, int token) {
        for (int i = 0; i < SPECIALS.length; i++) if (token == SPECIALS[i]) return trie.child(node, CHANNEL + i);
        if (token >= O200kHarmony.NUM_RANKS) return -1;
        Object s = text.step(node, O200kHarmony.get().tokenBytes(token));
        return s == null ? -1 : (Integer) s;
    }

    /** The tokens that may come at {@code node} (cached: a turn meets a few dozen nodes). */
    long[] allowed(int node) {
        return masks.computeIfAbsent(node, n -> {
            TokenMasker masker = TokenMasker.get();
            long[] mask = new long[masker.words()];
            masker.walk(text, n, mask);
            for (int i = 0; i < SPECIALS.length; i++)
                if (trie.child(n, CHANNEL + i) >= 0) mask[SPECIALS[i] >>> 6] |= 1L << SPECIALS[i];
            return mask;
        });
    }
}
