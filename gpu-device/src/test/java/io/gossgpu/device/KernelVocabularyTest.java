package io.gossgpu.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * One vocabulary over backend-cuda/kernels, backend-opencl/kernels and backend-metal/kernels: an op's file has the same name on every API
 * that has the op, a kernel that more than one API has takes the same params struct (same name, same fields in the
 * same order) on each, and a kernel that only some APIs have is listed in {@link #ONLY} with what it adds. The
 * differences not yet removed are listed in {@link #NOT_YET}, which only shrinks: an entry whose kernels agree
 * now fails until it is deleted. Reads the sources (CUDA's entry points from its packaged PTX); needs no device.
 */
class KernelVocabularyTest {
    /** The ops checked here, by file name (MoE and attention also have contract tests of their own for their buffers). */
    static final List<String> OPS =
            List.of("embed", "rmsnorm", "dense", "rope", "attention", "router", "moe", "add", "argmax", "sample");

    /**
     * What CUDA adds to a kernel's name: an entry point per weight format ({@code embed_bf16}, the params' {@code fmt}
     * unread), and per GEMM tile of tokens × rows ({@code dense_gemm_f32_64x128}: {@code GOSS_CUDA_DENSE_TILE_T/_R}).
     * The kernel's vocabulary name is the name without them.
     */
    static final Pattern CUDA_VARIANT = Pattern.compile("_(bf16|f16|f32|q8_0)(_\\d+x\\d+)?$");

    /** A kernel only some APIs have: those APIs, and what it adds over what the others run instead. */
    record Only(Set<String> apis, String adds) {}

    static final Map<String, Only> ONLY = Map.ofEntries(
            Map.entry(
                    "attention_gqa",
                    new Only(
                            Set.of("cuda", "opencl"),
                            "a block per KV head for all its query heads, keys optionally split (Metal runs attention)")),
            Map.entry(
                    "attention_split",
                    new Only(Set.of("opencl"), "attention with its keys split over work-groups (decode on few heads)")),
            Map.entry("attention_combine", new Only(Set.of("cuda", "opencl"), "merges the key splits with the sink")),
            Map.entry(
                    "attention_mma",
                    new Only(
                            Set.of("cuda"),
                            "attention_gqa's prefill on tensor cores (BF16 wmma, compute capability 8.0+, GOSS_CUDA_ATTENTION_MMA)")),
            Map.entry(
                    "moe_gate_up_mma",
                    new Only(
                            Set.of("cuda"),
                            "moe_gate_up_tiled on tensor cores (BF16 wmma, compute capability 8.0+, GOSS_CUDA_MOE_MMA)")),
            Map.entry(
                    "moe_down_mma",
                    new Only(
                            Set.of("cuda"),
                            "moe_down_tiled on tensor cores (BF16 wmma, compute capability 8.0+, GOSS_CUDA_MOE_MMA)")),
            Map.entry(
                    "dense_matvec",
                    new Only(
                            Set.of("cuda"),
                            "decode matvec: a warp (or several, GOSS_CUDA_DENSE_BLOCK) per row, up to 8 tokens per weight load")),
            Map.entry(
                    "dense_gemm",
                    new Only(
                            Set.of("cuda"),
                            "prefill GEMM in shared-memory tiles (GOSS_CUDA_DENSE_TILE_T × _TILE_R), from GOSS_CUDA_DENSE_PREFILL_MIN_T")),
            Map.entry(
                    "dense_gemm_mma",
                    new Only(
                            Set.of("cuda"),
                            "dense_gemm of BF16 weights on tensor cores (BF16 wmma, compute capability 8.0+, GOSS_CUDA_DENSE_MMA)")),
            Map.entry(
                    "dense_tiled",
                    new Only(
                            Set.of("metal"),
                            "prefill: 32 rows × 8 tokens per threadgroup, from GOSS_METAL_DENSE_PREFILL_MIN_T")),
            Map.entry(
                    "dense",
                    new Only(
                            Set.of("opencl", "metal"),
                            "one kernel for every format; OpenCL's tiles tokens per work-group (GOSS_OPENCL_DENSE_TILE_T)")),
            Map.entry(
                    "sample_max",
                    new Only(Set.of("cuda", "opencl"), "on-device sampling; Metal declines SAMPLE (the host samples)")),
            Map.entry(
                    "sample_sums",
                    new Only(Set.of("cuda", "opencl"), "on-device sampling; Metal declines SAMPLE (the host samples)")),
            Map.entry(
                    "sample_pick",
                    new Only(
                            Set.of("cuda", "opencl"), "on-device sampling; Metal declines SAMPLE (the host samples)")));

    /** Kernels more than one API has whose params struct still differs: kernel → why. Delete an entry when it agrees. */
    static final Map<String, String> NOT_YET = Map.of();

    private static final List<String> APIS = List.of("cuda", "opencl", "metal");

    /** A kernel of one API: its vocabulary name, the API's own name, and its params struct's fields. */
    record Seen(String api, String name, String struct, List<KernelParamsCheck.Field> fields) {}

    /** Every kernel of {@link #OPS} on every API, by vocabulary name. */
    static Map<String, List<Seen>> vocabulary(List<String> ops) {
        Map<String, List<Seen>> out = new TreeMap<>();
        for (String api : APIS) {
            var structs = KernelParamsCheck.structs(KernelSources.source(api));
            for (String op : ops)
                KernelSources.kernels(api, op).forEach((name, struct) -> {
                    String word =
                            api.equals("cuda") ? CUDA_VARIANT.matcher(name).replaceFirst("") : name;
                    List<Seen> seen = out.computeIfAbsent(word, k -> new ArrayList<>());
                    if (seen.stream().noneMatch(s -> s.api().equals(api))) // CUDA's variants of one kernel: the first
                    seen.add(new Seen(api, name, struct, struct == null ? null : structs.get(struct)));
                });
        }
        return out;
    }

    /** Each difference, one line: a kernel of several APIs with different params, an unlisted API-only kernel, a stale list entry. */
    static List<String> differences(
            Map<String, List<Seen>> vocabulary, Map<String, Only> only, Map<String, String> notYet) {
        List<String> out = new ArrayList<>();
        vocabulary.forEach((word, seen) -> {
            Set<String> apis = new TreeSet<>(seen.stream().map(Seen::api).toList());
            Only o = only.get(word);
            if (apis.size() < APIS.size() && (o == null || !o.apis().equals(apis)))
                out.add(word + ": only on " + apis
                        + (o == null ? ", not listed with what it adds" : ", listed for " + new TreeSet<>(o.apis())));
            if (apis.size() == APIS.size() && o != null) out.add(word + ": on every API now, still listed as API-only");
            boolean same = seen.stream()
                            .map(s -> s.struct() + " " + s.fields())
                            .distinct()
                            .count()
                    == 1;
            if (!same && !notYet.containsKey(word)) {
                StringBuilder sb = new StringBuilder(word + ": params differ:");
                for (Seen s : seen)
                    sb.append(' ')
                            .append(s.api())
                            .append(' ')
                            .append(s.name())
                            .append('(')
                            .append(s.struct())
                            .append(' ')
                            .append(s.fields())
                            .append(')');
                out.add(sb.toString());
            }
            if (same && seen.size() > 1 && notYet.containsKey(word))
                out.add(word + ": params agree now, delete it from NOT_YET");
        });
        only.keySet().stream()
                .filter(k -> !vocabulary.containsKey(k))
                .forEach(k -> out.add(k + ": listed in ONLY but no API has it"));
        notYet.keySet().stream()
                .filter(k -> !vocabulary.containsKey(k))
                .forEach(k -> out.add(k + ": listed in NOT_YET but no API has it"));
        return out;
    }

    @Test
    void everyKernelFileIsAnOpOfTheVocabulary() {
        for (String api : APIS)
            for (String op : KernelSources.opFiles(api))
                assertTrue(OPS.contains(op), api + ": " + op + " is not an op of " + OPS);
    }

    @Test
    void aKernelHasOneNameAndOneParamsStructOnEveryApiThatHasIt() {
        Map<String, List<Seen>> v = vocabulary(OPS);
        assertTrue(
                v.keySet().containsAll(List.of("embed", "rmsnorm", "topk_softmax", "add", "argmax", "moe_sort")),
                v.keySet().toString());
        assertEquals(List.of(), differences(v, ONLY, NOT_YET));
    }

    /** The check fails on a planted difference: a renamed field, an unlisted API-only kernel, a stale list entry. */
    @Test
    void aPlantedDifferenceFails() {
        Map<String, List<Seen>> v = vocabulary(OPS);
        Map<String, List<Seen>> planted = new TreeMap<>(v);
        List<Seen> norm = new ArrayList<>(v.get("rmsnorm"));
        Seen metal = norm.removeLast();
        norm.add(new Seen(
                metal.api(),
                metal.name(),
                metal.struct(),
                List.of(
                        new KernelParamsCheck.Field("int", "n"),
                        new KernelParamsCheck.Field(
                                "float", "eps")))); // Metal's NormParams as it was: { uint n; float eps; }
        planted.put("rmsnorm", norm);
        planted.put("add_rms", List.of(new Seen("cuda", "add_rms", "AddParams", List.of())));
        Map<String, String> notYet = new TreeMap<>(NOT_YET);
        notYet.put("rmsnorm", "planted");
        notYet.put("embed", "planted");
        var lines = differences(planted, ONLY, notYet);
        assertEquals(
                List.of(
                        "add_rms: only on [cuda], not listed with what it adds",
                        "embed: params agree now, delete it from NOT_YET"),
                lines);
        lines = differences(planted, ONLY, NOT_YET);
        assertTrue(
                lines.stream()
                        .anyMatch(l -> l.startsWith(
                                "rmsnorm: params differ: cuda rmsnorm(NormParams [Field[type=int, name=cols]")),
                lines.toString());
    }

    /** A knob table fails on a retired word, a word of no kernel, a threshold or a tile named otherwise (each planted). */
    @Test
    void aKnobOutsideTheVocabularyFails() {
        var range = io.gossgpu.backend.KnobValues.range(1, 16);
        var knobs = List.of(
                io.gossgpu.backend.Knob.of("cuda", "DENSE", "BLOCK", 1, range, "x", "x"),
                io.gossgpu.backend.Knob.of("cuda", "LINEAR", "BLOCK", 1, range, "x", "x"),
                io.gossgpu.backend.Knob.of("metal", "prefill", "MIN_T", 1, range, "x", "x"),
                io.gossgpu.backend.Knob.of("opencl", "GEMV", "WG", 1, range, "x", "x"),
                io.gossgpu.backend.Knob.of("metal", "dense_tiled", "TG", 1, range, "x", "x"),
                io.gossgpu.backend.Knob.of(
                        "opencl", "DENSE", "TILE", 1, range, "x", "x"), // OpenCL's tokens per work-group as it was
                io.gossgpu.backend.Knob.of("cuda", "DENSE", "TILE_T", 1, range, "x", "x"),
                io.gossgpu.backend.Knob.setting("cuda", "GRAPH", 1, range, "x", "x"));
        assertEquals(
                List.of(
                        "GOSS_CUDA_LINEAR_BLOCK: LINEAR is a retired word",
                        "GOSS_METAL_PREFILL_MIN_T: PREFILL is a retired word",
                        "GOSS_METAL_PREFILL_MIN_T: a token threshold is <OP>_PREFILL_MIN_T",
                        "GOSS_OPENCL_GEMV_WG: GEMV is no op or kernel of kernels/",
                        "GOSS_OPENCL_DENSE_TILE: a tile's size is <OP>_TILE_T (tokens) or <OP>_TILE_R (rows)"),
                KnobVocabulary.breaks(knobs));
    }
}
