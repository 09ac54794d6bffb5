package io.gossgpu.cpu;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.conformance.OpRuns;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.cpu.matmul.NativeCpu;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Attention of the cpu backend at contexts the conformance kit does not reach: a prefill of 1100 positions in
 * two batches (query blocks, the ring of the sliding layers wrapped many times), then decode steps at depth
 * 2100 to 2500, where the native kernels split the keys into chunks of 1024 and merge them. Every output
 * against the reference backend at the kit's float tolerance (1e-4 of the row's largest value): attention is
 * float on every kernel set.
 */
class LongContextAttentionTest {
    @ParameterizedTest
    @EnumSource(KernelSet.Isa.class)
    void longContextMatchesTheReference(KernelSet.Isa isa) {
        Assumptions.assumeTrue(
                NativeCpu.supports(isa), () -> isa + " kernels cannot run here: " + NativeCpu.unavailableReason());
        ModelConfig c = TestModelPresets.tiny();
        int ctx = 2600;
        try (Checkpoint ck = new TestModelGenerator(c, 44).inMemory();
                Backend cpu = CpuBackendProvider.withKernels(isa).create(io.gossgpu.backend.BackendOptions.defaults());
                Backend ref = new ReferenceBackend()) {
            ModelWeights w = ModelWeights.of(ck);
            try (LoadedWeights lc = cpu.loadWeights(w);
                    LoadedWeights lr = ref.loadWeights(w);
                    KvCache kc = cpu.createKvCache(new KvCacheSpec(c, ctx));
                    KvCache kr = ref.createKvCache(new KvCacheSpec(c, ctx))) {
                SplittableRandom r = new SplittableRandom(5);
                int[][] steps = {{0, 700}, {700, 400}, {1100, 1000}, {2100, 1}, {2101, 3}, {2104, 1}, {2499, 1}};
                int at = 0;
                for (int[] step : steps) {
                    int start = step[0], T = step[1];
                    if (start > at) { // positions at .. start−1: fill both caches with one batch
                        run(cpu, ref, lc, lr, kc, kr, c, at, start - at, r, false);
                    }
                    run(cpu, ref, lc, lr, kc, kr, c, start, T, r, true);
                    at = start + T;
                }
            }
        }
    }

    private static void run(
            Backend cpu,
            Backend ref,
            LoadedWeights lc,
            LoadedWeights lr,
            KvCache kc,
            KvCache kr,
            ModelConfig c,
            int start,
            int T,
            SplittableRandom r,
            boolean check) {
        float[] q = OpRuns.gaussian(r, T * c.qDim()),
                k = OpRuns.gaussian(r, T * c.kvDim()),
                v = OpRuns.gaussian(r, T * c.kvDim());
        for (int layer = 0; layer < c.numHiddenLayers(); layer++) {
            float[] got = OpRuns.attention(cpu, lc, layer, kc, start, T, c, q, k, v);
            float[] want = OpRuns.attention(ref, lr, layer, kr, start, T, c, q, k, v);
            if (check)
                BackendConformanceKit.assertClose(
                        "attention layer " + layer + " positions " + start + ".." + (start + T - 1),
                        want,
                        got,
                        T,
                        c.qDim(),
                        1e-4);
        }
    }
}
