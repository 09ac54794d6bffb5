package io.gossgpu.constrain;

import java.util.Arrays;
import java.util.BitSet;
import java.util.List;

/**
 * A byte trie over a few strings (object keys as JSON text with their closing quote, or enum values as JSON text).
 * Each node knows which strings pass through it, so a matcher can stop as soon as no allowed one is left.
 * Immutable after construction; node 0 is the root.
 */
public final class KeyTrie {
    private int[][] next = new int[16][]; // node -> 256 children (-1 none), allocated lazily
    private BitSet[] below = new BitSet[16]; // node -> indices of the strings through it
    private int[] ends = new int[16]; // node -> index of the string ending here, or -1
    private int size;

    public KeyTrie(List<byte[]> strings) {
        newNode();
        for (int i = 0; i < strings.size(); i++) {
            int n = 0;
            below[0].set(i);
            for (byte b : strings.get(i)) {
                int c = child(n, b & 0xff);
                if (c < 0) {
                    c = newNode();
                    if (next[n] == null) {
                        next[n] = new int[256];
                        Arrays.fill(next[n], -1);
                    }
                    next[n][b & 0xff] = c;
                }
                n = c;
                below[n].set(i);
            }
            if (ends[n] < 0) ends[n] = i; // a repeated string keeps its first index
        }
    }

    private int newNode() {
        if (size == ends.length) {
            next = Arrays.copyOf(next, size * 2);
            below = Arrays.copyOf(below, size * 2);
            ends = Arrays.copyOf(ends, size * 2);
        }
        below[size] = new BitSet();
        ends[size] = -1;
        return size++;
    }

    /** The child of {@code node} along byte {@code b}, or -1. */
    public int child(int node, int b) {
        int[] c = next[node];
        return c == null ? -1 : c[b];
    }

    public boolean hasChildren(int node) {
        return next[node] != null;
    }

    /** Index of the string that ends at {@code node}, or -1. */
    public int end(int node) {
        return ends[node];
    }

    /** Whether some string with index in {@code [lo, hi]} passes through {@code node}. */
    public boolean reaches(int node, int lo, int hi) {
        int i = below[node].nextSetBit(lo);
        return i >= 0 && i <= hi;
    }
}
