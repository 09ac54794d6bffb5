package io.gossgpu.reference;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.KvType;
import io.gossgpu.backend.Routing;
import io.gossgpu.model.ModelWeights;
import java.util.function.Function;

/**
 * The memory half of a backend whose "device" is the Java heap: activations are {@code float[]} and the
 * router's output is two arrays. The reference and cpu backends share it and differ only in their ops.
 */
public abstract class HeapMemoryBackend implements Backend {

    /** A {@code rows × cols} float tensor, row-major. */
    public static final class Tensor implements DeviceTensor {
        public final int rows, cols;
        public final float[] data;

        public Tensor(int rows, int cols) {
            if (rows <= 0 || cols <= 0)
                throw new GossException("tensor shape must be positive, got " + rows + "x" + cols);
            this.rows = rows;
            this.cols = cols;
            this.data = new float[Math.multiplyExact(rows, cols)];
        }

        @Override
        public int rows() {
            return rows;
        }

        @Override
        public int cols() {
            return cols;
        }

        @Override
        public void close() {}
    }

    /** Router output: {@code k} expert ids and weights per token, row-major. */
    public static final class RoutingBuf implements DeviceRouting {
        public final int rows, k;
        public final int[] experts;
        public final float[] weights;

        public RoutingBuf(int rows, int k) {
            this.rows = rows;
            this.k = k;
            experts = new int[rows * k];
            weights = new float[rows * k];
        }

        @Override
        public int rows() {
            return rows;
        }

        @Override
        public int k() {
            return k;
        }

        @Override
        public void close() {}
    }

    /** The embedding op both heap backends share: row {@code i} of {@code out} = embedding row {@code tokens[i]}. */
    public static void embedRows(ModelWeights model, int[] tokens, Tensor out) {
        int h = model.config().hiddenSize(), vocab = model.config().vocabSize();
        for (int i = 0; i < tokens.length; i++) {
            if (tokens[i] < 0 || tokens[i] >= vocab)
                throw new GossException(
                        "token id " + tokens[i] + " is outside the vocabulary (0.." + (vocab - 1) + ")");
            model.embedding().dequantizeRow(0, tokens[i], out.data, i * h);
        }
    }

    @Override
    public DeviceTensor allocate(int rows, int cols) {
        return new Tensor(rows, cols);
    }

    @Override
    public void write(DeviceTensor dst, float[] src) {
        Tensor t = (Tensor) dst;
        if (src.length != t.data.length)
            throw new GossException("write: " + src.length + " values into a " + t.rows + "x" + t.cols + " tensor");
        System.arraycopy(src, 0, t.data, 0, src.length);
    }

    @Override
    public float[] read(DeviceTensor src) {
        return ((Tensor) src).data.clone();
    }

    @Override
    public DeviceRouting allocateRouting(int rows, int k) {
        return new RoutingBuf(rows, k);
    }

    @Override
    public void writeRouting(DeviceRouting dst, Routing src) {
        RoutingBuf r = (RoutingBuf) dst;
        if (src.rows() != r.rows || src.k() != r.k) throw new GossException("writeRouting: shape mismatch");
        System.arraycopy(src.experts(), 0, r.experts, 0, r.experts.length);
        System.arraycopy(src.weights(), 0, r.weights, 0, r.weights.length);
    }

    @Override
    public Routing readRouting(DeviceRouting src) {
        RoutingBuf r = (RoutingBuf) src;
        return new Routing(r.rows, r.k, r.experts.clone(), r.weights.clone());
    }

    /**
     * A KV cache of Java arrays holding each number as {@code heldAs} does (the reference holds rounded floats
     * whatever the spec's type), made by {@code allocate} once the heap can hold it; else a GossException that says
     * why: too little free heap, or a layer's {@code slots + paddingSlots} rows past a Java array's 2^31 elements.
     */
    protected <C extends KvCache> C heapKvCache(
            KvCacheSpec spec, KvType heldAs, int paddingSlots, Function<KvCacheSpec, C> allocate) {
        Runtime rt = Runtime.getRuntime();
        long free = rt.maxMemory() - (rt.totalMemory() - rt.freeMemory());
        KvCacheSpec held = spec.withType(heldAs);
        if (held.bytes() > free)
            throw new GossException(held.describe() + " does not fit in the Java heap (" + KvCacheSpec.humanBytes(free)
                    + " free); choose a shorter context, a smaller --kv-type or raise -Xmx");
        for (int l = 0; l < spec.config().numHiddenLayers(); l++)
            if ((long) (spec.slots(l) + paddingSlots) * spec.config().kvDim() > Integer.MAX_VALUE - 8)
                throw new GossException(
                        spec.describe() + ": a layer exceeds the " + name() + " backend's 2^31-element arrays");
        try {
            return allocate.apply(spec);
        } catch (OutOfMemoryError e) {
            throw new GossException(spec.describe()
                    + " could not be allocated in the Java heap; choose a shorter context or raise -Xmx");
        }
    }
}
