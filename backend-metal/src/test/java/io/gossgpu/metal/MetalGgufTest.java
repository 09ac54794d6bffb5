package io.gossgpu.metal;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.conformance.RequiredBackends;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.GgufWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The kit loads the safetensors layout (OpenAI MXFP4, BF16). This runs the tiny model from GGUF files, whose
 * experts are ggml block_mxfp4 (repacked at upload) and whose dense matrices are BF16, F32 or Q8_0 (widened to
 * F32 at upload): prefill logits, then decode steps, against the reference reading the same file. The file is
 * memory-mapped, so its F32/BF16 matrices are wrapped in place ({@code goss_mtl_buffer_wrap}) rather than copied.
 */
class MetalGgufTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(GgufWriter.DenseType.class)
    void ggufModelMatchesTheReference(GgufWriter.DenseType dense) {
        MetalBackendProvider p = new MetalBackendProvider();
        RequiredBackends.requireAvailable(p);
        ModelConfig c = TestModelPresets.tiny();
        Path file = dir.resolve("tiny-" + dense + ".gguf");
        GgufWriter.write(
                new TestModelGenerator(c, 31),
                file,
                GgufWriter.Options.defaults().withDense(dense));
        int v = c.vocabSize();
        int[] toks = {5, 900, 17, 3, 1030, 44, 8, 600, 2, 71, 13, 999};
        try (Checkpoint ck = Checkpoint.open(file, LoadOptions.defaults());
                Backend metal = p.create(io.gossgpu.backend.BackendOptions.defaults());
                Backend ref = new ReferenceBackend()) {
            ModelWeights w = ModelWeights.of(ck);
            float[] want;
            try (LoadedWeights lr = ref.loadWeights(w);
                    Session s = new Session(ref, lr, 16)) {
                want = s.prefillAllLogits(toks);
            }
            try (LoadedWeights lm = metal.loadWeights(w);
                    Session s = new Session(metal, lm, 16)) {
                // the file is memory-mapped: its F32/BF16 matrices are used in place, not copied
                org.junit.jupiter.api.Assertions.assertTrue(
                        ((MetalWeights) lm).wrappedBytes > 0, "no weights wrapped in place");
                float[] first = s.prefillAllLogits(Arrays.copyOf(toks, 7));
                BackendConformanceKit.assertClose(
                        dense + " prefill logits", Arrays.copyOf(want, 7 * v), first, 7, v, 1e-3);
                for (int i = 7; i < toks.length; i++)
                    BackendConformanceKit.assertClose(
                            dense + " logits at " + i,
                            Arrays.copyOfRange(want, i * v, (i + 1) * v),
                            s.decode(toks[i]),
                            1,
                            v,
                            1e-3);
            }
        }
    }
}
