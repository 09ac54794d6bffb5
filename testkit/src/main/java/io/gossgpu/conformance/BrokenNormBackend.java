package io.gossgpu.conformance;

import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.ForwardingBackend;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.reference.ReferenceBackend;

/** The reference, except that layer 1's MLP norm nudges one value of each row by 1% of the row's scale. */
public final class BrokenNormBackend extends ForwardingBackend {
    public BrokenNormBackend() {
        super(new ReferenceBackend());
    }

    @Override
    public void rmsNorm(LoadedWeights w, int layer, NormKind which, DeviceTensor x, DeviceTensor out) {
        super.rmsNorm(w, layer, which, x, out);
        if (layer == 1 && which == NormKind.MLP) {
            float[] v = read(out);
            for (int i = 0; i < out.rows(); i++) v[i * out.cols() + 7] *= 1.01f;
            write(out, v);
        }
    }
}
