package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.conformance.OpRuns;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * rmsnorm and add_rmsnorm (rmsnorm.cu) on rows held in registers (n a multiple of 4 up to 16 × block: 2880 at block
 * 256) and on the two-pass path (4128 at block 256, 2880 at block 32), 3 rows each, against the reference at the kit's
 * tolerance 1e-4; add_rmsnorm in place (sum into x, norm into sum) and into tensors of its own, its sum exact and its
 * norm bit for bit the CUDA add then rmsnorm. Skipped like {@link CudaConformanceTest}.
 */
class CudaNormTest extends CudaAgainstReference {
    static final double OP_TOL = 1e-4;
    static final int T = 3;

    @ParameterizedTest(name = "n={0}, block={1}")
    @CsvSource({"2880, 256", "4096, 256", "4128, 256", "2880, 32", "96, 32"})
    void normsMatchTheReference(int n, int block) {
        ModelConfig c = new ModelConfig(1, 2, 1, 64, n, 32, 7.0f, 16, 2, 1, 5, 4096, 150000f, 32f, 1f, 32f, 1e-5f);
        SplittableRandom r = new SplittableRandom(900 + n + block);
        float[] x = OpRuns.gaussian(r, T * n), y = OpRuns.gaussian(r, T * n);
        try (CudaBackend cuda =
                        (CudaBackend) provider.create(BackendOptions.defaults().with(CudaKnobs.RMSNORM, block));
                Checkpoint ck = new TestModelGenerator(c, 45).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            try (LoadedWeights mine = cuda.loadWeights(w);
                    LoadedWeights ref = reference.loadWeights(w)) {
                String what = "n " + n + ", block " + block;
                try (DeviceTensor in = cuda.allocate(T, n);
                        DeviceTensor out = cuda.allocate(T, n);
                        DeviceTensor rin = reference.allocate(T, n);
                        DeviceTensor rout = reference.allocate(T, n)) {
                    cuda.write(in, x);
                    reference.write(rin, x);
                    cuda.rmsNorm(mine, 0, NormKind.MLP, in, out);
                    reference.rmsNorm(ref, 0, NormKind.MLP, rin, rout);
                    BackendConformanceKit.assertClose(
                            "rmsNorm, " + what, reference.read(rout), cuda.read(out), T, n, OP_TOL);

                    // the fused op's reference: the reference's add, then its rmsNorm
                    reference.write(rout, y);
                    reference.add(rin, rout, rin);
                    float[] want = reference.read(rin);
                    reference.rmsNorm(ref, 0, NormKind.MLP, rin, rout);
                    float[] wantNorm = reference.read(rout);

                    // the separate CUDA ops: the fused op's norm must be theirs bit for bit
                    DeviceTensor cy = cuda.allocate(T, n), sep = cuda.allocate(T, n);
                    cuda.write(in, x);
                    cuda.write(cy, y);
                    cuda.add(in, cy, in);
                    cuda.rmsNorm(mine, 0, NormKind.MLP, in, sep);
                    float[] separate = cuda.read(sep);

                    // own tensors
                    cuda.write(in, x);
                    DeviceTensor sum = cuda.allocate(T, n);
                    cuda.addRmsNorm(mine, 0, NormKind.MLP, in, cy, sum, out);
                    assertArrayEquals(want, cuda.read(sum), "addRmsNorm sum, own tensors, " + what);
                    BackendConformanceKit.assertClose(
                            "addRmsNorm norm, own tensors, " + what, wantNorm, cuda.read(out), T, n, OP_TOL);
                    assertArrayEquals(
                            separate,
                            cuda.read(out),
                            "addRmsNorm = add then rmsNorm bit for bit, own tensors, " + what);

                    // in place as the executor runs it: sum into x, the norm over it into the sum as well
                    cuda.write(in, x);
                    cuda.addRmsNorm(mine, 0, NormKind.MLP, in, cy, in, in);
                    assertArrayEquals(
                            separate, cuda.read(in), "addRmsNorm = add then rmsNorm bit for bit, in place, " + what);
                    sum.close();
                    cy.close();
                    sep.close();
                }
            }
        }
    }
}
