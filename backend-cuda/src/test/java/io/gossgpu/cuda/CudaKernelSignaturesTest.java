package io.gossgpu.cuda;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The parameter lists of the packaged PTX entry points, as CudaBackend packs them (p = pointer / 8 bytes,
 * or 64-bit int, i = 32-bit int, f = float). A kernel whose C signature changes without its launch in
 * CudaBackend would read garbage on the GPU; this catches it on a machine without one.
 */
class CudaKernelSignaturesTest {
    static final Map<String, String> OPS = new LinkedHashMap<>();

    static {
        OPS.put("rope_f32", "piiipp");
        OPS.put("sdpa_f32", "pppppppipiiiiiif");
        OPS.put("kv_store_f32", "ppppipiii");
        OPS.put("topk_softmax_f32", "piiipp");
        OPS.put("moe_gate_up", "ppppippppiiiifp");
        OPS.put("moe_down", "ppippppiiiip");
        OPS.put("argmax_f32", "piip");
    }

    static final Map<String, String> MOE_PREFILL = Map.of(
            "moe_sort", "piipppp",
            "moe_gate_up_tiled", "ppppipppppppiiifp",
            "moe_down_tiled", "ppippppppiip",
            "moe_combine", "ppiiip");

    /** dense.cu: embed, matvec and every GEMM tile, once per element type. */
    static final Map<String, String> DENSE = new LinkedHashMap<>();

    static {
        for (String e : new String[]{"bf16", "f16", "f32", "q8_0"}) {
            DENSE.put("dense_embed_" + e, "pppiip");
            DENSE.put("dense_matvec_" + e, "pppipiiipipipi");
            for (String tile : new String[]{"32x64", "64x64", "32x128", "64x128"}) {
                DENSE.put("dense_gemm_" + e + "_" + tile, "pppipiiipipip");
            }
        }
    }

    static String signature(String ptx, String entry) {
        Matcher m = Pattern.compile("\\.entry " + entry + "\\((.*?)\\)", Pattern.DOTALL).matcher(ptx);
        assertTrue(m.find(), "no .entry " + entry);
        StringBuilder sb = new StringBuilder();
        Matcher p = Pattern.compile("\\.param \\.(\\w+)").matcher(m.group(1));
        while (p.find()) {
            sb.append(switch (p.group(1)) {
                case "u64" -> "p";
                case "u32", "s32" -> "i";
                case "f32" -> "f";
                case "s64" -> "L";
                default -> "?" + p.group(1);
            });
        }
        return sb.toString();
    }

    @Test
    void packagedEntryPointsTakeWhatCudaBackendPasses() {
        var manifest = CudaKernels.manifest();
        if (manifest.isEmpty()) {
            return; // no PTX in this build: CudaKernelsTest covers the message
        }
        for (String arch : manifest.get().archs()) {
            String ops = new String(CudaKernels.ptx("ops", arch), StandardCharsets.UTF_8);
            OPS.forEach((entry, sig) -> assertEquals(sig, signature(ops, entry), entry + " in ops." + arch + ".ptx"));
            String dense = new String(CudaKernels.ptx("dense", arch), StandardCharsets.UTF_8);
            DENSE.forEach((entry, sig) -> assertEquals(sig, signature(dense, entry), entry + " in dense." + arch + ".ptx"));
            assertEquals("pppif", signature(new String(CudaKernels.ptx("rmsnorm", arch), StandardCharsets.UTF_8), "rmsnorm_f32"));
            assertEquals("pppp", signature(new String(CudaKernels.ptx("add", arch), StandardCharsets.UTF_8), "add_f32"));
            String moe = new String(CudaKernels.ptx("moe_prefill", arch), StandardCharsets.UTF_8);
            MOE_PREFILL.forEach((entry, sig) -> assertEquals(sig, signature(moe, entry), entry + " in moe_prefill." + arch + ".ptx"));
            String sdpa = new String(CudaKernels.ptx("sdpa_prefill", arch), StandardCharsets.UTF_8);
            assertEquals("pppppppipiiiiiifip", signature(sdpa, "sdpa_tiled_f32"));
            assertEquals("ppiiiip", signature(sdpa, "sdpa_combine_f32"));
            String sample = new String(CudaKernels.ptx("sample", arch), StandardCharsets.UTF_8);
            assertEquals("piip", signature(sample, "sample_max_f32"));
            assertEquals("piippp", signature(sample, "sample_sums_f32"));
            assertEquals("piiipppp", signature(sample, "sample_pick_f32"));
        }
    }
}
