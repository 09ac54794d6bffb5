package io.gossgpu.backend;

import io.gossgpu.GossException;
import java.util.Arrays;
import java.util.List;

/**
 * The rows of one step: consecutive runs of rows, each the next tokens of one sequence, which has its own KV cache
 * and positions ({@link Sequence}). Sequence {@code s} takes rows {@link #firstRow}{@code (s) ..} {@code + tokens − 1},
 * at positions {@code start .. start + tokens − 1}. A prefill chunk is a run of several rows, a decode token a run of
 * one; one step may mix them. Row-wise ops (norms, linear layers, router, MoE, adds) see the batch as plain rows;
 * {@link Backend#qkvRope} takes each row's position from it and {@link Backend#attention} attends per sequence.
 * Immutable; checked when made (positions inside each cache's context, no cache twice).
 */
public final class Batch {
    /** {@code tokens} rows of the sequence whose cache is {@code cache}, at positions {@code start ..}. */
    public record Sequence(KvCache cache, int start, int tokens) {
        public Sequence {
            if (cache == null) throw new NullPointerException("cache");
            if (tokens <= 0) throw new GossException("a sequence of a batch needs at least one token, got " + tokens);
            if (start < 0 || (long) start + tokens > cache.spec().contextLength())
                throw new GossException("positions " + start + ".." + ((long) start + tokens - 1)
                        + " exceed the context length " + cache.spec().contextLength());
        }
    }

    private final Sequence[] sequences;
    private final int[] firstRow, positions;
    private final int rows;

    private Batch(Sequence[] sequences) {
        if (sequences.length == 0) throw new GossException("a batch needs at least one sequence");
        this.sequences = sequences;
        firstRow = new int[sequences.length];
        int r = 0;
        for (int s = 0; s < sequences.length; s++) {
            for (int o = 0; o < s; o++)
                if (sequences[o].cache() == sequences[s].cache())
                    throw new GossException(
                            "a batch holds one run of rows per KV cache (sequences " + o + " and " + s + " share one)");
            firstRow[s] = r;
            r = Math.addExact(r, sequences[s].tokens());
        }
        rows = r;
        positions = new int[rows];
        for (int s = 0; s < sequences.length; s++)
            for (int i = 0; i < sequences[s].tokens(); i++) positions[firstRow[s] + i] = sequences[s].start() + i;
    }

    /** One sequence: {@code tokens} positions from {@code start} of {@code cache}. */
    public static Batch of(KvCache cache, int start, int tokens) {
        return new Batch(new Sequence[] {new Sequence(cache, start, tokens)});
    }

    public static Batch of(List<Sequence> sequences) {
        return new Batch(sequences.toArray(new Sequence[0]));
    }

    public static Batch of(Sequence... sequences) {
        return new Batch(sequences.clone());
    }

    /** Rows of the whole batch (T). */
    public int rows() {
        return rows;
    }

    /** Sequences in the batch. */
    public int size() {
        return sequences.length;
    }

    public Sequence sequence(int s) {
        return sequences[s];
    }

    public KvCache cache(int s) {
        return sequences[s].cache();
    }

    public int start(int s) {
        return sequences[s].start();
    }

    public int tokens(int s) {
        return sequences[s].tokens();
    }

    /** The batch row of sequence {@code s}'s first token. */
    public int firstRow(int s) {
        return firstRow[s];
    }

    /** The position of batch row {@code row}. */
    public int position(int row) {
        return positions[row];
    }

    /** The sequence batch row {@code row} belongs to. */
    public int sequenceOf(int row) {
        if (row < 0 || row >= rows) throw new IndexOutOfBoundsException("row " + row + " of " + rows);
        int s = Arrays.binarySearch(firstRow, row);
        return s >= 0 ? s : -s - 2;
    }

    /** One past the highest position of any row (what a RoPE table must cover). */
    public int endPosition() {
        int end = 0;
        for (Sequence q : sequences) end = Math.max(end, q.start() + q.tokens());
        return end;
    }

    /** The position of every row, in row order. */
    public int[] positions() {
        return positions.clone();
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("batch of ").append(rows).append(rows == 1 ? " row:" : " rows:");
        for (Sequence q : sequences) b.append(' ').append(q.start()).append('+').append(q.tokens());
        return b.toString();
    }
}
