package io.gossgpu.backend;

import io.gossgpu.model.ModelWeights;

/**
 * A backend that passes every call to another: subclass it to trace, time or (in tests) perturb one op
 * of a real backend. The declinable ops ({@link BackendOp#declinable}: {@link #sample}, {@link #addRmsNorm}) are not
 * passed on: it declines them, so they run as their fallbacks through this backend's own calls (the host picks from
 * this backend's {@link #logits}; add then rmsNorm), and a subclass that changes one primitive op changes every path
 * through it. A subclass that wants the delegate's own declinable op overrides {@link #supports} and that op.
 */
public class ForwardingBackend implements Backend {
    protected final Backend delegate;

    public ForwardingBackend(Backend delegate) {
        this.delegate = delegate;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public String deviceDescription() {
        return delegate.deviceDescription();
    }

    @Override
    public DeviceTensor allocate(int rows, int cols) {
        return delegate.allocate(rows, cols);
    }

    @Override
    public void write(DeviceTensor dst, float[] src) {
        delegate.write(dst, src);
    }

    @Override
    public float[] read(DeviceTensor src) {
        return delegate.read(src);
    }

    @Override
    public DeviceRouting allocateRouting(int rows, int k) {
        return delegate.allocateRouting(rows, k);
    }

    @Override
    public void writeRouting(DeviceRouting dst, Routing src) {
        delegate.writeRouting(dst, src);
    }

    @Override
    public Routing readRouting(DeviceRouting src) {
        return delegate.readRouting(src);
    }

    @Override
    public LoadedWeights loadWeights(ModelWeights weights) {
        return delegate.loadWeights(weights);
    }

    @Override
    public KvCache createKvCache(KvCacheSpec spec) {
        return delegate.createKvCache(spec);
    }

    @Override
    public void embed(LoadedWeights w, int[] tokens, DeviceTensor out) {
        delegate.embed(w, tokens, out);
    }

    @Override
    public void rmsNorm(LoadedWeights w, int layer, NormKind which, DeviceTensor x, DeviceTensor out) {
        delegate.rmsNorm(w, layer, which, x, out);
    }

    @Override
    public void dense(LoadedWeights w, int layer, DenseKind which, DeviceTensor x, DeviceTensor out) {
        delegate.dense(w, layer, which, x, out);
    }

    @Override
    public void qkvRope(
            LoadedWeights w, int layer, DeviceTensor x, Batch batch, DeviceTensor q, DeviceTensor k, DeviceTensor v) {
        delegate.qkvRope(w, layer, x, batch, q, k, v);
    }

    @Override
    public void attention(
            LoadedWeights w, int layer, DeviceTensor q, DeviceTensor k, DeviceTensor v, Batch batch, DeviceTensor out) {
        delegate.attention(w, layer, q, k, v, batch, out);
    }

    @Override
    public void router(LoadedWeights w, int layer, DeviceTensor x, DeviceRouting out) {
        delegate.router(w, layer, x, out);
    }

    @Override
    public void moe(LoadedWeights w, int layer, DeviceTensor x, DeviceRouting routing, DeviceTensor out) {
        delegate.moe(w, layer, x, routing, out);
    }

    @Override
    public void add(DeviceTensor a, DeviceTensor b, DeviceTensor out) {
        delegate.add(a, b, out);
    }

    @Override
    public float[] logits(LoadedWeights w, DeviceTensor x, int fromRow) {
        return delegate.logits(w, x, fromRow);
    }

    @Override
    public int[] argmax(LoadedWeights w, DeviceTensor x, int fromRow) {
        return delegate.argmax(w, x, fromRow);
    }

    @Override
    public boolean supports(BackendOp op) {
        return !op.declinable() && delegate.supports(op);
    }

    @Override
    public void beginStep(Batch batch) {
        delegate.beginStep(batch);
    }

    @Override
    public void endStep() {
        delegate.endStep();
    }

    @Override
    public void synchronize() {
        delegate.synchronize();
    }

    @Override
    public java.util.SortedMap<String, Long> counters() {
        return delegate.counters();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
