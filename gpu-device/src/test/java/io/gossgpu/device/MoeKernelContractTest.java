package io.gossgpu.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The MoE kernels are one contract on every API ({@link MoePipeline}): backend-cuda/kernels, backend-opencl/kernels and backend-metal/kernels
 * each declare {@code struct MoeParams} as the record {@link MoeParams} has it, and each of
 * {@link MoePipeline#KERNELS} takes {@link MoePipeline#BUFFERS} buffers and then a {@code MoeParams} (OpenCL's
 * {@code __local} arguments, dynamic group memory, aside); the knob tables name the prefill threshold
 * {@code GOSS_<API>_MOE_PREFILL_MIN_T}, and none the names it replaced. Reads the sources, needs no device.
 */
class MoeKernelContractTest {
    /** Per API: its kernel folder, source suffixes and the documents whose knob table names its knobs. */
    private static final Map<String, List<String>> SOURCES =
            Map.of("cuda", List.of(".cu", ".cuh"), "opencl", List.of(".cl"), "metal", List.of(".metal", ".h"));

    private static final Map<String, Path> KNOB_TABLES = Map.of(
            "cuda",
            KernelSources.dir("cuda").resolve("README.md"),
            "opencl",
            KernelSources.dir("opencl").resolve("README.md"),
            "metal",
            KernelSources.ROOT.resolve("backend-metal/README.md"));

    @Test
    void everyApiDeclaresTheOneMoeParamsStruct() throws IOException {
        for (String api : SOURCES.keySet()) {
            var structs = KernelParamsCheck.structs(KernelSources.source(api));
            assertEquals(
                    KernelParamsCheck.fields(MoeParams.class), structs.get("MoeParams"), api + ": struct MoeParams");
        }
    }

    @Test
    void everyMoeKernelTakesTheSameBuffersThenMoeParamsOnEveryApi() throws IOException {
        for (String api : SOURCES.keySet()) {
            String src = KernelSources.source(api);
            for (int i = 0; i < MoePipeline.KERNELS.size(); i++) {
                String name = MoePipeline.KERNELS.get(i);
                KernelSources.assertBuffersThenParams(api, src, name, MoePipeline.BUFFERS.get(i), "MoeParams");
            }
        }
    }

    @Test
    void theKnobTablesNameThePrefillThresholdAlike() throws IOException {
        for (var e : KNOB_TABLES.entrySet()) {
            String doc = Files.readString(e.getValue());
            String knob = "GOSS_" + e.getKey().toUpperCase() + "_MOE_PREFILL_MIN_T";
            assertTrue(doc.contains(knob), e.getValue() + " does not name " + knob);
            for (String old : List.of("MOE_GROUPMIN", "MOE_TILED_MIN_T"))
                assertFalse(doc.contains(old), e.getValue() + " still names " + old);
        }
    }
}
