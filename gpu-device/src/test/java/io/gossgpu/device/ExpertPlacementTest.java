package io.gossgpu.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOp;
import io.gossgpu.backend.ExpertPlacement;
import io.gossgpu.backend.ForwardingBackend;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import org.junit.jupiter.api.Test;

/** The request, the plan and the two halves of a split model, without a device (the GPU kits and CudaSplitMemoryTest run them on one). */
class ExpertPlacementTest {
    @Test
    void autoPutsTheFewestFirstLayersOnTheCpu() {
        long[] experts = {10, 10, 10, 10};
        assertEquals(0, PlacementPlanner.cpuLayersFor(40, experts));
        assertEquals(1, PlacementPlanner.cpuLayersFor(39, experts));
        assertEquals(2, PlacementPlanner.cpuLayersFor(25, experts));
        assertEquals(3, PlacementPlanner.cpuLayersFor(10, experts));
        assertEquals(4, PlacementPlanner.cpuLayersFor(9, experts));
        assertEquals(4, PlacementPlanner.cpuLayersFor(0, experts));
    }

    @Test
    void flagsMakeTheRequestAndBadValuesAreOneLineErrors() {
        assertEquals(
                ExpertPlacement.Mode.AUTO,
                ExpertPlacement.fromFlags(false, null, 8192).mode());
        assertEquals(8192, ExpertPlacement.fromFlags(false, null, 8192).kvTokens());
        assertEquals(ExpertPlacement.allOnCpu(), ExpertPlacement.fromFlags(true, null, 1));
        assertEquals(ExpertPlacement.firstOnCpu(12), ExpertPlacement.fromFlags(false, 12, 1));
        assertEquals(
                "give --cpu-moe or --n-cpu-moe, not both",
                assertThrows(GossException.class, () -> ExpertPlacement.fromFlags(true, 3, 1))
                        .getMessage());
        assertEquals(
                "--n-cpu-moe must be 0 or more, got -1",
                assertThrows(GossException.class, () -> ExpertPlacement.fromFlags(false, -1, 1))
                        .getMessage());
        assertEquals(
                "--n-cpu-moe must be between 0 and the model's 24 layers, got 25",
                assertThrows(GossException.class, () -> ExpertPlan.fixed(ExpertPlacement.firstOnCpu(25), 24))
                        .getMessage());
        assertEquals(ExpertPlan.allOnCpu(24), ExpertPlan.fixed(ExpertPlacement.allOnCpu(), 24));
    }

    @Test
    void plansDescribeTheirLayers() {
        assertEquals(
                "experts of layers 0-11 on the CPU, 12-23 on the GPU",
                ExpertPlan.firstOnCpu(24, 12).describe());
        assertEquals(
                "experts of all 24 layers on the CPU",
                ExpertPlan.firstOnCpu(24, 24).describe());
        assertEquals(
                "experts of all 3 layers on the GPU",
                ExpertPlan.firstOnCpu(3, 0).describe());
        assertEquals(
                "experts of layers 0,2 on the CPU, 1,3 on the GPU",
                ExpertPlan.layersOnCpu(4, 0, 2).describe());
        assertEquals(3, ExpertPlan.layersOnCpu(5, 0, 1, 4).cpuLayers());
    }

    @Test
    void eachSideHoldsOnlyItsPart() {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 5).inMemory()) {
            ModelWeights m = ModelWeights.of(ck);
            ExpertPlan plan = ExpertPlan.layersOnCpu(m.layers().size(), 1);
            ModelWeights gpu = SplitModel.gpuPart(m, plan), cpu = SplitModel.cpuPart(m, plan);
            assertSame(m.embedding(), gpu.embedding());
            assertNull(cpu.embedding());
            assertNull(cpu.unembedding());
            for (int l = 0; l < m.layers().size(); l++) {
                LayerWeights g = gpu.layers().get(l),
                        c = cpu.layers().get(l),
                        w = m.layers().get(l);
                assertSame(w.router(), g.router());
                assertSame(w.q(), g.q());
                assertNull(c.q());
                assertNull(c.router());
                if (l == 1) {
                    assertNull(g.gate());
                    assertNull(g.downBias());
                    assertSame(w.gate(), c.gate());
                    assertSame(w.downBias(), c.downBias());
                } else {
                    assertSame(w.gate(), g.gate());
                    assertNotNull(g.upBias());
                    assertNull(c.gate());
                    assertNull(c.upBias());
                }
            }
        }
    }

    /** A split keeps what the GPU runs itself: its device sampling and fused ops are not lost to the host path. */
    @Test
    void aSplitSupportsWhatItsGpuSupports() {
        for (boolean gpuSamples : new boolean[] {true, false}) {
            Backend gpu = new ForwardingBackend(new io.gossgpu.reference.ReferenceBackend()) {
                @Override
                public boolean supports(BackendOp op) {
                    return op == BackendOp.SAMPLE ? gpuSamples : delegate.supports(op);
                }
            };
            try (Backend split =
                    new SplitBackend(gpu, new io.gossgpu.reference.ReferenceBackend(), ExpertPlan.layersOnCpu(2, 1))) {
                for (BackendOp op : BackendOp.values())
                    assertEquals(gpu.supports(op), split.supports(op), op + " with a GPU that samples: " + gpuSamples);
            }
        }
    }
}
