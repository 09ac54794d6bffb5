package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.device.KernelParams;
import io.gossgpu.device.KernelParamsCheck;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every entry point the launchers declare ({@link CudaBackend#ENTRIES}) is in its packaged PTX file with the parameters
 * the launcher packs: its buffers (pointers), then one params struct whose size and alignment are those of the
 * entry's {@link KernelParams} record ({@link CudaEntry#signature}); and every record mirrors, field by field, the
 * struct of its name in the kernel sources, which declare no params struct without its record. A kernel whose C
 * signature or struct changes without its launch would read garbage on the GPU; this catches it on a machine without
 * one.
 */
class CudaKernelSignaturesTest {
    private static final Path SOURCES = PtxBuildTool.KERNELS;

    /** The parameters of {@code entry} in {@code ptx}: p per pointer, L / i / f per other scalar, {size,align} per struct. */
    static String signature(String ptx, String entry) {
        Matcher m = Pattern.compile("\\.entry " + entry + "\\((.*?)\\)", Pattern.DOTALL)
                .matcher(ptx);
        assertTrue(m.find(), "no .entry " + entry);
        StringBuilder sb = new StringBuilder();
        Matcher p = Pattern.compile("\\.param (?:\\.align (\\d+) \\.b8 \\w+\\[(\\d+)]|\\.(\\w+))")
                .matcher(m.group(1));
        while (p.find()) {
            if (p.group(1) != null) {
                sb.append('{').append(p.group(2)).append(',').append(p.group(1)).append('}');
                continue;
            }
            sb.append(
                    switch (p.group(3)) {
                        case "u64" -> "p";
                        case "u32", "s32" -> "i";
                        case "f32" -> "f";
                        case "s64" -> "L";
                        default -> "?" + p.group(3);
                    });
        }
        return sb.toString();
    }

    @Test
    void everyDeclaredEntryIsPackagedWithTheParametersItsLauncherPasses() {
        CudaKernels.Manifest manifest =
                CudaKernelsTest.packagedManifest(); // no PTX: fails where it must exist, else skips
        assertEquals(
                48,
                CudaBackend.ENTRIES.size(),
                "entries "
                        + CudaBackend.ENTRIES); // 42 + moe_gate_up_mma, moe_down_mma, add_rmsnorm, dense_gemm_mma_bf16,
        // attention_mma, kv_round
        for (String arch : manifest.archs()) {
            for (CudaEntry e : CudaBackend.ENTRIES) {
                String ptx = new String(CudaKernels.ptx(e.file(), arch), StandardCharsets.UTF_8);
                assertEquals(
                        e.signature(), signature(ptx, e.name()), e.name() + " in " + e.file() + "." + arch + ".ptx");
            }
        }
    }

    @Test
    void readsAStructParameterAsItsSizeAndAlignment() {
        String ptx = """
                .visible .entry rmsnorm(
                	.param .u64 rmsnorm_param_0,
                	.param .u64 rmsnorm_param_1,
                	.param .u64 rmsnorm_param_2,
                	.param .align 4 .b8 rmsnorm_param_3[8]
                )
                """;
        assertEquals("ppp{8,4}", signature(ptx, "rmsnorm"));
        assertEquals("ppp{8,4}", DenseLauncher.RMSNORM.signature());
        assertEquals("ppp{8,8}", DenseLauncher.ADD.signature());
    }

    @Test
    void theParamsRecordsMirrorTheStructsOfTheKernelSources() throws IOException {
        List<Class<? extends KernelParams>> records =
                new java.util.ArrayList<>(KernelParamsCheck.recordsIn(CudaBackend.class));
        records.add(
                io.gossgpu.device.MoeParams.class); // the device layer's, shared by every API (MoeKernelContractTest)
        records.add(io.gossgpu.device.AttentionParams.class); // likewise (AttentionKernelContractTest)
        records.addAll(io.gossgpu.device.OpParams.ALL); // the small ops', shared by every API too
        records.add(io.gossgpu.device.SampleParams.class); // the sampling kernels', shared with OpenCL
        KernelParamsCheck.assertMirrors(sources(), records);
        // each record is some entry's, and each entry's record is among them
        assertEquals(
                records.stream().collect(Collectors.toSet()),
                CudaBackend.ENTRIES.stream().map(CudaEntry::params).collect(Collectors.toSet()));
    }

    /** Every kernel source and header of backend-cuda/kernels, concatenated. */
    static String sources() throws IOException {
        try (Stream<Path> files = Files.list(SOURCES)) {
            StringBuilder sb = new StringBuilder();
            for (Path f : files.filter(
                            p -> p.toString().endsWith(".cu") || p.toString().endsWith(".cuh"))
                    .sorted()
                    .toList()) sb.append(Files.readString(f)).append('\n');
            assertTrue(sb.indexOf("__global__") >= 0, "no kernels in " + SOURCES);
            return sb.toString();
        }
    }

    /** The knob table is GOSS_<API>_<OP>_<KNOB> in the kernels' vocabulary. */
    @Test
    void knobsSpeakTheKernelVocabulary() {
        io.gossgpu.device.KnobVocabulary.assertSpeaks(CudaKnobs.ALL);
    }
}
