package io.gossgpu.conformance;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.Routing;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.placement.ExpertPlan;
import io.gossgpu.placement.SplitBackend;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;
import java.util.function.IntFunction;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The conformance kit on a split model: a GPU backend ({@link #gpu()}) running everything but the MoE experts of the
 * layers {@link #placement()} puts on the CPU, which the cpu backend runs on its Java float kernels (so the kit's float
 * tolerances hold), through {@link SplitBackend}. Every op and whole-model test of the kit runs against the reference.
 * A GPU module adds one class per placement:
 *
 * <pre>{@code
 * class OpenClSplitEveryOtherConformanceTest extends SplitConformanceKit {
 *     protected BackendProvider gpu() { return new OpenClBackendProvider(); }
 *     protected Placement placement() { return Placement.EVERY_OTHER; }
 * }
 * }</pre>
 */
public abstract class SplitConformanceKit extends BackendConformanceKit {
    /** The placements the kit runs: every layer's experts on the CPU, layers 0, 2, 4 … on the CPU, only the last layer's. */
    public enum Placement {
        ALL_ON_CPU(ExpertPlan::allOnCpu),
        EVERY_OTHER(n -> ExpertPlan.layersOnCpu(n, IntStream.range(0, n).filter(l -> l % 2 == 0).toArray())),
        LAST_ONLY(n -> ExpertPlan.layersOnCpu(n, n - 1));

        final IntFunction<ExpertPlan> plan;

        Placement(IntFunction<ExpertPlan> plan) {
            this.plan = plan;
        }
    }

    /** The GPU backend under test. */
    protected abstract BackendProvider gpu();

    protected abstract Placement placement();

    @Override
    protected final BackendProvider provider() {
        BackendProvider gpu = gpu();
        return new BackendProvider() {
            @Override
            public String name() {
                return gpu.name();
            }

            @Override
            public int priority() {
                return gpu.priority();
            }

            @Override
            public Availability availability() {
                return gpu.availability();
            }

            @Override
            public Backend create(BackendOptions options) {
                return new SplitBackend(gpu.create(options), CpuBackendProvider.withKernels(KernelSet.Isa.JAVA).create(options), placement().plan);
            }
        };
    }

    /** The kit's ops reach the cpu backend on the CPU's layers: the MoE of each such layer runs there and matches the reference. */
    @Test
    void moeOfCpuLayersRunsOnTheCpu() {
        for (String shape : new String[]{"tiny", "odd", "wide"}) {
            Model m = model(shape);
            ModelConfig c = m.config();
            ExpertPlan plan = SplitBackend.plan(m.mine());
            assertEquals(placement().plan.apply(c.numHiddenLayers()), plan);
            int T = 3, k = c.expertsPerToken();
            SplittableRandom r = new SplittableRandom(38);
            float[] x = new float[T * c.hiddenSize()];
            for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
            for (int layer = 0; layer < c.numHiddenLayers(); layer++) {
                long before = backend.counters().get("split_cpu_moe");
                try (Pair in = pair(T, c.hiddenSize(), x); Pair out = pair(T, c.hiddenSize(), null);
                     DeviceRouting rm = backend.allocateRouting(T, k); DeviceRouting rr = reference.allocateRouting(T, k)) {
                    reference.router(m.ref(), layer, in.ref(), rr);
                    Routing want = reference.readRouting(rr);
                    backend.writeRouting(rm, want);
                    backend.moe(m.mine(), layer, in.mine(), rm, out.mine());
                    reference.moe(m.ref(), layer, in.ref(), rr, out.ref());
                    assertClose("moe of layer " + layer + " (" + plan + "), " + shape, reference.read(out.ref()), backend.read(out.mine()),
                            T, c.hiddenSize(), moeTolerance());
                }
                assertEquals(before + (plan.onCpu(layer) ? 1 : 0), backend.counters().get("split_cpu_moe"), "layer " + layer);
            }
            assertTrue(plan.splits());
        }
    }
}
