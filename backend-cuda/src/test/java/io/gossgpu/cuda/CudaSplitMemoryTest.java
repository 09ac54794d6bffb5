package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.api.ChatListener;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.api.Reply;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.DeviceMemoryException;
import io.gossgpu.backend.ExpertPlacement;
import io.gossgpu.backend.KvType;
import io.gossgpu.device.ExpertPlan;
import io.gossgpu.device.PlacementPlanner;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.SafetensorsWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Memory accounting of the expert placement on a GPU whose free memory the fake driver sets: {@code auto} keeps every
 * expert on a GPU that holds them, puts as few layers' experts on the CPU as make the rest fit when it does not (and the
 * model then loads and answers, the CPU's experts counted in the backend's counters), and names what does not fit when
 * even the model without experts and the KV cache do not. The free memory is scaled to the test model (a few MiB), so
 * that the plan falls between whole layers; only under the fake driver (elsewhere skipped, saying why).
 */
@ExtendWith(FakeCudaDriver.class)
class CudaSplitMemoryTest {
    @TempDir
    Path dir;

    @Test
    void autoPlanFitsTheFreeMemoryLoadsAndAnswers() {
        Path model = SafetensorsWriter.writeTinyOriginal(dir, 1);
        int kvTokens = 4096;
        // the engine plans for its own cache type (F16 by default): so must the plans this test compares with
        ExpertPlacement auto = ExpertPlacement.auto(kvTokens).withKvType(KvType.DEFAULT);
        PlacementPlanner.MemoryPlan whole;
        int layers;
        try (Checkpoint ck = Checkpoint.open(model, LoadOptions.defaults());
                CudaBackend gpu = (CudaBackend) new CudaBackendProvider().create(BackendOptions.defaults())) {
            ModelWeights mw = ModelWeights.of(ck);
            layers = mw.layers().size();
            whole = PlacementPlanner.plan(gpu, mw, auto, EngineOptions.DEFAULT_PREFILL_CHUNK);
            assertFalse(
                    whole.plan().splits(), "the default free memory holds the whole tiny model: " + whole.describe());
            assertEquals(gpu.deviceBytes(mw), whole.gpuWeightBytes(), "the plan counts what the upload allocates");
            long perLayer = whole.expertBytes()[0];
            assertTrue(perLayer > 0 && whole.restBytes() > 0, whole.describe().toString());
            // a KV cache larger than two layers' experts: a plan that forgot it would keep every expert on the GPU
            assertTrue(whole.kvBytes() > 2 * perLayer, whole.describe().toString());

            // room for the rest, the KV cache, scratch and one and a half layers' experts: the last layer's stay on the
            // GPU
            long free = whole.restBytes() + whole.kvBytes() + whole.scratchBytes() + perLayer * 3 / 2;
            FakeCudaDriver.setFreeMemory(free);
            PlacementPlanner.MemoryPlan p = PlacementPlanner.plan(gpu, mw, auto, EngineOptions.DEFAULT_PREFILL_CHUNK);
            assertEquals(
                    ExpertPlan.firstOnCpu(layers, layers - 1),
                    p.plan(),
                    p.describe().toString());
            assertTrue(
                    p.gpuWeightBytes() + p.kvBytes() + p.scratchBytes() <= free,
                    p.describe().toString());
            assertEquals(p.gpuWeightBytes(), gpu.deviceBytes(io.gossgpu.device.SplitModel.gpuPart(mw, p.plan())));
        }

        try (Engine e = Engine.open(EngineOptions.of(model).withBackend("cuda").withPlacement(auto))) {
            assertTrue(
                    e.backendDescription().contains("MoE experts of some layers on the CPU"), e.backendDescription());
            Reply r = e.newCompletion(
                            ChatOptions.defaults().withContextLength(kvTokens).withMaxTokens(4))
                    .complete("a", new ChatListener() {}); // one byte token: ids below the tiny vocabulary
            assertEquals(4, r.tokens().length);
            // the prompt step and three decode steps, each with the CPU layers' MoE on the CPU
            assertEquals(
                    4L * (layers - 1),
                    e.backendCounters().get("split_cpu_moe"),
                    e.backendCounters().toString());
        }

        // not even the model without experts and the KV cache: a one-line error naming both; auto goes on to the cpu
        // backend
        FakeCudaDriver.setFreeMemory(whole.restBytes() + whole.kvBytes() - 1);
        DeviceMemoryException err = assertThrows(
                DeviceMemoryException.class,
                () -> Engine.open(EngineOptions.of(model).withBackend("cuda").withPlacement(auto))
                        .close());
        assertTrue(
                err.getMessage()
                        .matches(
                                "even with every layer's experts on the CPU, the rest of the model \\([0-9.]+ [KM]iB\\) and a KV cache "
                                        + "for 4096 positions \\([0-9.]+ [KM]iB\\) with [0-9.]+ [KM]iB scratch need [0-9.]+ [KM]iB on goss-gpu fake CUDA driver, which has "
                                        + "[0-9.]+ [KM]iB free; choose a shorter context or another backend"),
                err.getMessage());
        assertFalse(err.getMessage().contains("\n"));

        // a fixed plan whose GPU part does not fit names it
        FakeCudaDriver.setFreeMemory(whole.restBytes() + whole.expertBytes()[0] / 2);
        DeviceMemoryException fixed = assertThrows(
                DeviceMemoryException.class,
                () -> Engine.open(EngineOptions.of(model)
                                .withBackend("cuda")
                                .withPlacement(ExpertPlacement.firstOnCpu(layers - 1)))
                        .close());
        assertTrue(
                fixed.getMessage().startsWith("--n-cpu-moe " + (layers - 1) + ": the GPU's weights ("),
                fixed.getMessage());
        assertTrue(fixed.getMessage().endsWith("put more layers' experts on the CPU"), fixed.getMessage());
    }

    /**
     * Streaming ({@code --stream-experts-min-t}) counts one layer's experts of GPU scratch: on a GPU with room for the
     * rest, the KV cache, the plain scratch and one and a half layers' experts, {@code auto} without streaming keeps the
     * last layer's experts on the GPU, with streaming none (the scratch set takes one layer); that plan loads, its prompt
     * step streams every layer's experts and its decode steps run them on the CPU.
     */
    @Test
    void streamingCountsOneLayersScratchAndRuns() {
        Path model = SafetensorsWriter.writeTinyOriginal(dir, 1);
        int kvTokens = 4096;
        ExpertPlacement auto = ExpertPlacement.auto(kvTokens).withKvType(KvType.DEFAULT),
                streaming = auto.withStreamMinTokens(2);
        int layers;
        try (Checkpoint ck = Checkpoint.open(model, LoadOptions.defaults());
                CudaBackend gpu = (CudaBackend) new CudaBackendProvider().create(BackendOptions.defaults())) {
            ModelWeights mw = ModelWeights.of(ck);
            layers = mw.layers().size();
            PlacementPlanner.MemoryPlan plain =
                    PlacementPlanner.plan(gpu, mw, auto, EngineOptions.DEFAULT_PREFILL_CHUNK);
            PlacementPlanner.MemoryPlan streamed =
                    PlacementPlanner.plan(gpu, mw, streaming, EngineOptions.DEFAULT_PREFILL_CHUNK);
            long perLayer = java.util.Arrays.stream(plain.expertBytes()).max().orElseThrow();
            assertEquals(
                    plain.scratchBytes() + perLayer,
                    streamed.scratchBytes(),
                    "streaming adds the largest layer's experts");
            FakeCudaDriver.setFreeMemory(plain.restBytes() + plain.kvBytes() + plain.scratchBytes() + perLayer * 3 / 2);
            assertEquals(
                    ExpertPlan.firstOnCpu(layers, layers - 1),
                    PlacementPlanner.plan(gpu, mw, auto, EngineOptions.DEFAULT_PREFILL_CHUNK)
                            .plan());
            PlacementPlanner.MemoryPlan p =
                    PlacementPlanner.plan(gpu, mw, streaming, EngineOptions.DEFAULT_PREFILL_CHUNK);
            assertEquals(ExpertPlan.allOnCpu(layers), p.plan(), p.describe().toString());
            assertTrue(
                    p.describe().get(0).startsWith("placement  auto --stream-experts-min-t 2: "),
                    p.describe().toString());
        }
        try (Engine e = Engine.open(EngineOptions.of(model).withBackend("cuda").withPlacement(streaming))) {
            Reply r = e.newCompletion(
                            ChatOptions.defaults().withContextLength(kvTokens).withMaxTokens(4))
                    .complete("a!", new ChatListener() {}); // two byte tokens ("a", "!"): a prompt step of 2 rows
            assertEquals(4, r.tokens().length);
            assertEquals(
                    (long) layers,
                    e.backendCounters().get("split_streamed_moe"),
                    e.backendCounters().toString());
            assertEquals(
                    3L * layers,
                    e.backendCounters().get("split_cpu_moe"),
                    e.backendCounters().toString());
        }
    }
}
