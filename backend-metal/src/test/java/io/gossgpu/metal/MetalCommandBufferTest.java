package io.gossgpu.metal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.conformance.RequiredBackends;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import org.junit.jupiter.api.Test;

/** A decode step (every layer, then the logits) is encoded into a single command buffer, as the step contract lets it. */
class MetalCommandBufferTest {
    @Test
    void aDecodeStepIsOneCommandBuffer() {
        MetalBackendProvider p = new MetalBackendProvider();
        RequiredBackends.requireAvailable(p);
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 5).inMemory();
                MetalBackend b = (MetalBackend) p.create(io.gossgpu.backend.BackendOptions.defaults());
                LoadedWeights w = b.loadWeights(ModelWeights.of(ck));
                Session s = new Session(b, w, 32)) {
            s.prefill(new int[] {1, 2, 3, 4, 5, 6});
            s.decode(7); // first decode: scratch buffers for T=1 are sized (and may commit) here
            long gpuBefore = b.counters().get("gpu_microseconds");
            for (int tok = 8; tok < 12; tok++) {
                long before = commits(b);
                s.decode(tok);
                assertEquals(1, commits(b) - before, "command buffers committed by one decode step");
            }
            assertTrue(
                    b.counters().get("gpu_microseconds") > gpuBefore,
                    "the steps' GPU time is counted: " + b.counters());
            // the step contract: work encoded before a step is committed by beginStep, the step's own at its end
            try (var x = b.allocate(1, 8);
                    var cache = b.createKvCache(new io.gossgpu.backend.KvCacheSpec(w.config(), 16))) {
                b.add(x, x, x);
                long before = commits(b);
                b.beginStep(io.gossgpu.backend.Batch.of(cache, 12, 1));
                assertEquals(1, commits(b) - before, "beginStep commits what was encoded before the step");
                b.add(x, x, x);
                b.endStep();
                assertEquals(2, commits(b) - before, "endStep commits the step's dispatches");
                b.endStep();
                assertEquals(2, commits(b) - before, "nothing pending: nothing committed");
            }
        }
    }

    private static long commits(MetalBackend b) {
        return b.counters().get("command_buffers");
    }
}
