package io.gossgpu.forward;

/** One op of the forward pass as an observer sees it: its kind and layer ({@code -1} for EMBED, FINAL_NORM and LOGITS). */
public record GraphOp(OpKind kind, int layer) {
    @Override
    public String toString() {
        return layer < 0 ? kind.name() : kind.name() + "[layer " + layer + "]";
    }
}
