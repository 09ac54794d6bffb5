package io.gossgpu.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The attention kernels are one contract on every API ({@link AttentionPipeline}): attention.cu, attention.cl and
 * attention.metal each declare {@code AttentionParams} as the record {@link AttentionParams} has it and no other params
 * struct; every kernel they declare is one of {@link AttentionPipeline#KERNELS} (the API's set as {@link #HAS} says)
 * and takes {@link AttentionPipeline#BUFFERS} buffers, then an {@code AttentionParams} (OpenCL's {@code __local}
 * arguments aside); the knob tables name the attention knobs {@code GOSS_<API>_ATTENTION_…} and none
 * {@code _SDPA_}. Reads the sources, needs no device.
 */
class AttentionKernelContractTest {
    private static final Map<String, String> FILES = Map.of(
            "cuda",
            "backend-cuda/kernels/attention.cu",
            "opencl",
            "backend-opencl/kernels/attention.cl",
            "metal",
            "backend-metal/kernels/attention.metal");
    /**
     * Which kernels each API has: attention_split is OpenCL's alone, attention_mma CUDA's, Metal has neither split
     * kernel; kv_round where an API stores every KvType.
     */
    static final Map<String, Set<String>> HAS = Map.of(
            "cuda",
                    Set.of(
                            AttentionPipeline.ATTENTION,
                            AttentionPipeline.GQA,
                            AttentionPipeline.COMBINE,
                            AttentionPipeline.KV_STORE,
                            AttentionPipeline.MMA,
                            AttentionPipeline.KV_ROUND),
            "opencl",
                    Set.of(
                            AttentionPipeline.ATTENTION,
                            AttentionPipeline.GQA,
                            AttentionPipeline.SPLIT,
                            AttentionPipeline.COMBINE,
                            AttentionPipeline.KV_STORE,
                            AttentionPipeline.KV_ROUND),
            "metal", Set.of(AttentionPipeline.ATTENTION, AttentionPipeline.KV_STORE, AttentionPipeline.KV_ROUND));

    private static final Map<String, Path> KNOB_TABLES = Map.of(
            "cuda",
            KernelSources.dir("cuda").resolve("README.md"),
            "opencl",
            KernelSources.dir("opencl").resolve("README.md"),
            "metal",
            KernelSources.ROOT.resolve("backend-metal/README.md"));
    private static final Map<String, Pattern> DECLARATION = Map.of(
            "cuda",
            Pattern.compile("extern \"C\" __global__ void (\\w+)\\("),
            "opencl",
            Pattern.compile("__kernel void (\\w+)\\("),
            "metal",
            Pattern.compile("KERNEL\\((\\w+)\\)"));

    @Test
    void everyApiDeclaresTheOneAttentionParamsStructAndNoOther() throws IOException {
        for (String api : FILES.keySet()) {
            var structs = KernelParamsCheck.structs(source(api));
            assertEquals(Set.of("AttentionParams"), structs.keySet(), api + ": params structs of " + FILES.get(api));
            assertEquals(
                    KernelParamsCheck.fields(AttentionParams.class),
                    structs.get("AttentionParams"),
                    api + ": struct AttentionParams");
        }
    }

    @Test
    void everyApiDeclaresItsAttentionKernelsUnderThePipelinesNames() throws IOException {
        for (String api : FILES.keySet())
            assertEquals(
                    new TreeSet<>(HAS.get(api)), kernels(api, source(api)), api + ": kernels of " + FILES.get(api));
        for (String k : AttentionPipeline.KERNELS)
            assertTrue(HAS.values().stream().anyMatch(s -> s.contains(k)), k + " is on no API");
    }

    @Test
    void everyAttentionKernelTakesTheSameBuffersThenAttentionParamsOnEveryApi() throws IOException {
        for (String api : FILES.keySet()) {
            String src = source(api);
            for (String name : HAS.get(api)) {
                int buffers = AttentionPipeline.buffers(name);
                List<String> args = KernelSources.assertBuffersThenParams(api, src, name, buffers, "AttentionParams");
                assertEquals(
                        buffers + 1,
                        args.size(),
                        api + " " + name + ": " + buffers + " buffers, then the params: " + args);
            }
        }
    }

    @Test
    void theKnobTablesNameTheAttentionKnobsAlike() throws IOException {
        for (var e : KNOB_TABLES.entrySet()) {
            String doc = Files.readString(e.getValue());
            String api = e.getKey().toUpperCase();
            assertTrue(
                    doc.contains("GOSS_" + api + "_ATTENTION_") || doc.contains("`ATTENTION`"),
                    e.getValue() + " names no GOSS_" + api + "_ATTENTION_ knob");
            assertFalse(doc.contains("_SDPA_") || doc.contains("SDPA_"), e.getValue() + " still names an SDPA knob");
            assertFalse(doc.contains("attention_tiled"), e.getValue() + " still names attention_tiled");
        }
    }

    /** The kernels declared in {@code src}. */
    private static TreeSet<String> kernels(String api, String src) {
        TreeSet<String> out = new TreeSet<>();
        for (Matcher m = DECLARATION.get(api).matcher(src); m.find(); ) out.add(m.group(1));
        return out;
    }

    /** An API's attention file, comments removed. */
    private static String source(String api) throws IOException {
        String s = Files.readString(KernelSources.ROOT.resolve(FILES.get(api)));
        return s.replaceAll("//[^\n]*", "").replaceAll("(?s)/\\*.*?\\*/", "");
    }
}
