package io.gossgpu.graph;

/** One node of the graph: an op and its layer ({@code -1} for EMBED, FINAL_NORM and LOGITS). */
public record GraphOp(OpKind kind, int layer) {
    @Override
    public String toString() {
        return layer < 0 ? kind.name() : kind.name() + "[layer " + layer + "]";
    }
}
