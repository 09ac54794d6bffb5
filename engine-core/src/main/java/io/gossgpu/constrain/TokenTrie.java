package io.gossgpu.constrain;

import java.util.Arrays;
import java.util.Comparator;

/**
 * The byte strings of a set of tokens as a trie laid out in preorder: node {@code j} has byte {@link #bytes}[j] at
 * depth {@link #depths}[j] (1 for a token's first byte), the token that ends there ({@link #tokens}[j], or -1), and
 * its subtree runs up to {@link #ends}[j]. A walk steps a matcher along the nodes in order and skips a subtree as soon
 * as the matcher dies, so each token prefix is tried once for all the tokens that share it.
 */
final class TokenTrie {
    final byte[] bytes;
    final short[] depths;
    final int[] tokens;
    final int[] ends;
    final int maxDepth;

    /** The trie of {@code ids}, whose bytes are {@code text[id]}. */
    TokenTrie(byte[][] text, int[] ids) {
        Integer[] order = Arrays.stream(ids).boxed().toArray(Integer[]::new);
        Arrays.sort(order, Comparator.comparing((Integer id) -> text[id], Arrays::compareUnsigned));
        int cap = 0;
        for (int id : ids) cap += text[id].length;
        byte[] b = new byte[cap];
        short[] d = new short[cap];
        int[] t = new int[cap], e = new int[cap];
        int[] open = new int[1024]; // the node at each depth on the current path
        int depth = 0, n = 0, deepest = 0;
        byte[] prev = new byte[0];
        for (int id : order) {
            byte[] s = text[id];
            int m = Arrays.mismatch(prev, s);
            int common = m < 0 ? s.length : m; // equal strings cannot happen: token strings are distinct
            while (depth > common) e[open[--depth]] = n; // close the nodes the new string leaves
            for (int k = common; k < s.length; k++) {
                b[n] = s[k];
                d[n] = (short) (k + 1);
                t[n] = -1;
                open[depth++] = n++;
            }
            t[open[s.length - 1]] = id;
            deepest = Math.max(deepest, s.length);
            prev = s;
        }
        while (depth > 0) e[open[--depth]] = n;
        this.bytes = Arrays.copyOf(b, n);
        this.depths = Arrays.copyOf(d, n);
        this.tokens = Arrays.copyOf(t, n);
        this.ends = Arrays.copyOf(e, n);
        this.maxDepth = deepest;
    }

    int size() {
        return bytes.length;
    }
}
