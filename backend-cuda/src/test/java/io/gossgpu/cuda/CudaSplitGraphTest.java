package io.gossgpu.cuda;

import static io.gossgpu.cuda.CudaGraphDecodeTest.SMALL;
import static io.gossgpu.cuda.CudaGraphDecodeTest.STEPS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.device.ExpertPlan;
import io.gossgpu.device.SplitBackend;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import java.util.SortedMap;
import org.junit.jupiter.api.Test;

/**
 * Decode steps of a split model ({@link SplitBackend}: some layers' experts on the cpu backend) as CUDA graphs, one per
 * GPU segment (the work between two crossings to the CPU), and the crossings' copies through pinned host memory. The
 * decode of {@link CudaGraphDecodeTest} (36 steps: logits, argmax, logits again) on the 2-layer model with layer 0's
 * experts on the CPU (2 segments) and with both layers' (3 segments). Skipped like {@link CudaConformanceTest} when the
 * backend is unavailable; the pinned-memory counts need the fake driver.
 */
class CudaSplitGraphTest extends CudaAgainstReference {
    static final ExpertPlan[] PLANS = {ExpertPlan.layersOnCpu(2, 0), ExpertPlan.allOnCpu(2)};

    static Backend split(BackendProvider p, String graph, ExpertPlan plan) {
        BackendOptions o = CudaGraphDecodeTest.graphs(graph);
        return new SplitBackend(
                p.create(o), CpuBackendProvider.withKernels(KernelSet.Isa.JAVA).create(o), plan);
    }

    /**
     * Graphs on: the first decode step captures every segment, the first argmax step only the last segment again (the
     * others launch the same kernels), and every step launches one graph per segment. The logits and ids equal those of
     * the same split decode launched kernel by kernel (bit for bit) and the reference's, and the CPU ran its layers' MoE
     * in the prefill and every step.
     */
    @Test
    void splitDecodeRunsOneGraphPerGpuSegment() {
        try (Checkpoint ck = new TestModelGenerator(SMALL, 31).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            int[] prompt = CudaGraphDecodeTest.prompt();
            for (ExpertPlan plan : PLANS) {
                CudaGraphDecodeTest.Run graphs, eager;
                try (Backend b = split(provider, "1", plan)) {
                    graphs = CudaGraphDecodeTest.decode(b, w, prompt, null);
                }
                try (Backend b = split(provider, "0", plan)) {
                    eager = CudaGraphDecodeTest.decode(b, w, prompt, null);
                }
                int segments = plan.cpuLayers() + 1;
                SortedMap<String, Long> g = graphs.stats(), e = eager.stats();
                String what = plan + ": " + g;
                assertEquals(
                        segments + 1, g.get("graph_captures"), "each segment once, the last again for argmax: " + what);
                assertEquals(
                        (long) segments * STEPS,
                        g.get("graph_launches"),
                        "every decode step one graph per segment: " + what);
                assertEquals(
                        (long) plan.cpuLayers() * (STEPS + 1),
                        g.get("split_cpu_moe"),
                        "the CPU's layers in the prefill and every step: " + what);
                assertEquals(0, e.get("graph_captures") + e.get("graph_launches"), "GOSS_CUDA_GRAPH=0: " + e);
                CudaGraphDecodeTest.assertGraphsMatch(
                        graphs, eager, CudaGraphDecodeTest.decode(reference, w, prompt, graphs.inputs()), ", " + plan);
            }
        }
    }

    /**
     * Every crossing copies through page-locked memory: the input rows, the routing's ids and weights out and the result
     * back are four asynchronous copies from or to a {@code cuMemHostAlloc} allocation, one staging buffer while the
     * split backend is open, freed when it closes. Only under the fake driver, which counts them.
     */
    @Test
    void crossingsCopyThroughPinnedMemoryFreedOnClose() {
        assumeTrue(FakeCudaDriver.present(), FakeCudaDriver.NEEDED);
        try (Checkpoint ck = new TestModelGenerator(SMALL, 31).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            int[] prompt = CudaGraphDecodeTest.prompt();
            int allocations = FakeCudaDriver.hostAllocations();
            long copies = FakeCudaDriver.pinnedCopies();
            long offloaded;
            try (Backend b = split(provider, "1", PLANS[1])) {
                offloaded =
                        CudaGraphDecodeTest.decode(b, w, prompt, null).stats().get("split_cpu_moe");
                assertEquals(allocations + 1, FakeCudaDriver.hostAllocations(), "one pinned staging buffer while open");
            }
            assertEquals(
                    4 * offloaded,
                    FakeCudaDriver.pinnedCopies() - copies,
                    "four pinned copies per crossing, " + offloaded + " crossings");
            assertEquals(
                    allocations, FakeCudaDriver.hostAllocations(), "closing the split backend freed its pinned memory");
        }
    }
}
