package io.gossgpu.model.gguf;

import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightView;
import java.lang.reflect.RecordComponent;
import java.util.LinkedHashMap;
import java.util.Map;

/** Every canonical weight of a model by a layout-neutral label (e.g. "layer1.gate"). */
final class CanonicalWeights {
    private CanonicalWeights() {}

    static Map<String, WeightView> of(ModelWeights w) {
        Map<String, WeightView> out = new LinkedHashMap<>();
        out.put("embedding", w.embedding());
        for (int n = 0; n < w.layers().size(); n++) {
            LayerWeights l = w.layers().get(n);
            for (RecordComponent rc : LayerWeights.class.getRecordComponents()) {
                try {
                    out.put("layer" + n + "." + rc.getName(), (WeightView)
                            rc.getAccessor().invoke(l));
                } catch (ReflectiveOperationException e) {
                    throw new AssertionError(e);
                }
            }
        }
        out.put("finalNorm", w.finalNorm());
        out.put("unembedding", w.unembedding());
        return out;
    }
}
