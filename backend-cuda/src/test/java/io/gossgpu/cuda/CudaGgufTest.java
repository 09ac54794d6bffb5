package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.conformance.RequiredBackends;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.GgufWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The dense ops on GGUF files, which the kit (OpenAI layout, BF16) does not load: Q, K and V as three file
 * tensors fused into one device matrix, and each dense type the writer has (BF16; F32; ggml-org's Q8_0 attention
 * and embeddings with an F32 router), on the cuda backend against the reference at the kit's per-op tolerance.
 * Skipped without a CUDA device.
 */
class CudaGgufTest {
    @TempDir
    Path dir;

    static void compare(String what, Backend ref, DeviceTensor want, CudaBackend cuda, DeviceTensor got) {
        BackendConformanceKit.assertClose(what, ref.read(want), cuda.read(got), want.rows(), want.cols(), 1e-4);
    }

    @ParameterizedTest
    @EnumSource(GgufWriter.DenseType.class)
    void denseOpsMatchTheReference(GgufWriter.DenseType type) {
        RequiredBackends.requireAvailable(new CudaBackendProvider());
        ModelConfig c = TestModelPresets.tiny();
        Path f = dir.resolve("m-" + type + ".gguf");
        GgufWriter.write(
                new TestModelGenerator(c, 41), f, GgufWriter.Options.defaults().withDense(type));
        try (Checkpoint ck = Checkpoint.open(f, LoadOptions.defaults());
                CudaBackend cuda = CudaBackend.create(io.gossgpu.backend.BackendOptions.defaults());
                Backend ref = new ReferenceBackend()) {
            ModelWeights w = ModelWeights.of(ck);
            try (LoadedWeights mine = cuda.loadWeights(w);
                    LoadedWeights theirs = ref.loadWeights(w)) {
                CudaWeights cw = (CudaWeights) mine;
                WeightFormat attention = switch (type) {
                    case BF16 -> WeightFormat.BF16;
                    case F32 -> WeightFormat.F32;
                    case Q8_0 -> WeightFormat.Q8_0;
                };
                assertEquals(attention, cw.tensors.layer(0).dense(DenseKind.Q).format(), "fused QKV on the device");
                assertEquals(attention, cw.tensors.embedding().format(), "embedding on the device");
                assertEquals(
                        type == GgufWriter.DenseType.BF16 ? WeightFormat.BF16 : WeightFormat.F32,
                        cw.tensors.layer(0).dense(DenseKind.ROUTER).format(),
                        "router on the device");
                SplittableRandom r = new SplittableRandom(7);
                for (int T : new int[] {1, 17}) {
                    int[] tokens = r.ints(T, 0, c.vocabSize()).toArray();
                    try (DeviceTensor em = cuda.allocate(T, c.hiddenSize());
                            DeviceTensor er = ref.allocate(T, c.hiddenSize())) {
                        cuda.embed(mine, tokens, em);
                        ref.embed(theirs, tokens, er);
                        compare(type + " embed T=" + T, ref, er, cuda, em);
                        for (int layer = 0; layer < c.numHiddenLayers(); layer++) {
                            for (DenseKind kind : DenseKind.values()) {
                                float[] x = new float[T * kind.cols(c)];
                                for (int i = 0; i < x.length; i++) {
                                    x[i] = (float) r.nextGaussian();
                                }
                                try (DeviceTensor xm = cuda.allocate(T, kind.cols(c));
                                        DeviceTensor xr = ref.allocate(T, kind.cols(c));
                                        DeviceTensor om = cuda.allocate(T, kind.rows(c));
                                        DeviceTensor or = ref.allocate(T, kind.rows(c))) {
                                    cuda.write(xm, x);
                                    ref.write(xr, x);
                                    cuda.dense(mine, layer, kind, xm, om);
                                    ref.dense(theirs, layer, kind, xr, or);
                                    compare(
                                            type + " linear " + kind + " layer " + layer + " T=" + T,
                                            ref,
                                            or,
                                            cuda,
                                            om);
                                }
                            }
                            try (DeviceTensor qm = cuda.allocate(T, c.qDim());
                                    DeviceTensor qr = ref.allocate(T, c.qDim());
                                    DeviceTensor km = cuda.allocate(T, c.kvDim());
                                    DeviceTensor kr = ref.allocate(T, c.kvDim());
                                    DeviceTensor vm = cuda.allocate(T, c.kvDim());
                                    DeviceTensor vr = ref.allocate(T, c.kvDim());
                                    KvCache cm = cuda.createKvCache(new KvCacheSpec(c, 5 + T));
                                    KvCache cr = ref.createKvCache(new KvCacheSpec(c, 5 + T))) {
                                cuda.qkvRope(mine, layer, em, Batch.of(cm, 5, T), qm, km, vm);
                                ref.qkvRope(theirs, layer, er, Batch.of(cr, 5, T), qr, kr, vr);
                                compare(type + " qkvRope q layer " + layer + " T=" + T, ref, qr, cuda, qm);
                                compare(type + " qkvRope k layer " + layer + " T=" + T, ref, kr, cuda, km);
                                compare(type + " qkvRope v layer " + layer + " T=" + T, ref, vr, cuda, vm);
                            }
                        }
                        BackendConformanceKit.assertClose(
                                type + " logits T=" + T,
                                ref.logits(theirs, er, 0),
                                cuda.logits(mine, em, 0),
                                T,
                                c.vocabSize(),
                                1e-4);
                    }
                }
            }
        }
    }
}
