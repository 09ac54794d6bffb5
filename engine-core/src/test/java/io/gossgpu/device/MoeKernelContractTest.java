package io.gossgpu.device;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The MoE kernels are one contract on every API ({@link MoePipeline}): kernels/cuda, kernels/opencl and kernels/metal
 * each declare {@code struct MoeParams} as the record {@link MoeParams} has it, and each of
 * {@link MoePipeline#KERNELS} takes {@link MoePipeline#BUFFERS} buffers and then a {@code MoeParams} (OpenCL's
 * {@code __local} arguments, dynamic group memory, aside); the knob tables name the prefill threshold
 * {@code GOSS_<API>_MOE_PREFILL_MIN_T}, and none the names it replaced. Reads the sources, needs no device.
 */
class MoeKernelContractTest {
    private static final Path KERNELS = Path.of("..", "kernels").toAbsolutePath().normalize();
    /** Per API: its kernel folder, source suffixes and the documents whose knob table names its knobs. */
    private static final Map<String, List<String>> SOURCES = Map.of("cuda", List.of(".cu", ".cuh"), "opencl", List.of(".cl"),
            "metal", List.of(".metal", ".h"));
    private static final Map<String, Path> KNOB_TABLES = Map.of("cuda", KERNELS.resolve("cuda/README.md"),
            "opencl", KERNELS.resolve("opencl/README.md"), "metal", KERNELS.resolve("../backend-metal/README.md").normalize());

    @Test
    void everyApiDeclaresTheOneMoeParamsStruct() throws IOException {
        for (String api : SOURCES.keySet()) {
            var structs = KernelParamsCheck.structs(source(api));
            assertEquals(KernelParamsCheck.fields(MoeParams.class), structs.get("MoeParams"), api + ": struct MoeParams");
        }
    }

    @Test
    void everyMoeKernelTakesTheSameBuffersThenMoeParamsOnEveryApi() throws IOException {
        for (String api : SOURCES.keySet()) {
            String src = source(api);
            for (int i = 0; i < MoePipeline.KERNELS.size(); i++) {
                String name = MoePipeline.KERNELS.get(i);
                List<String> args = arguments(api, src, name);
                String last = args.getLast();
                assertTrue(last.contains("MoeParams"), api + " " + name + ": the last argument is " + last);
                long buffers = args.stream().filter(a -> isBuffer(api, a)).count();
                assertEquals(MoePipeline.BUFFERS.get(i).longValue(), buffers, api + " " + name + " buffers: " + args);
                for (int j = 0; j < buffers; j++)
                    assertTrue(isBuffer(api, args.get(j)), api + " " + name + ": argument " + j + " is not a buffer: " + args.get(j));
                if (api.equals("metal")) // buffer indices 0.., then the params at the next
                    for (int j = 0; j <= buffers; j++)
                        assertTrue(args.get(j).replaceAll("\\s", "").endsWith("," + j + ")"), "metal " + name + ": index of " + args.get(j));
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

    private static boolean isBuffer(String api, String arg) {
        return switch (api) {
            case "cuda" -> arg.contains("*");
            case "opencl" -> arg.contains("__global");
            default -> arg.startsWith("BUF(");
        };
    }

    /** The kernel's parameter declarations, in order (OpenCL's {@code __local} ones left out). */
    static List<String> arguments(String api, String src, String name) {
        String open = switch (api) {
            case "cuda" -> "extern \"C\" __global__ void " + name + "(";
            case "opencl" -> "__kernel void " + name + "(";
            default -> "KERNEL(" + name + ")(";
        };
        int at = src.indexOf(open);
        assertTrue(at >= 0, api + ": no kernel " + name);
        assertEquals(-1, src.indexOf(open, at + 1), api + ": kernel " + name + " twice");
        List<String> args = new ArrayList<>();
        int depth = 0;
        StringBuilder cur = new StringBuilder();
        for (int i = at + open.length(); ; i++) {
            char c = src.charAt(i);
            if (depth == 0 && (c == ',' || c == ')')) {
                String a = cur.toString().strip().replaceAll("\\s+", " ");
                if (!a.startsWith("__local") && !a.startsWith("TG_BUF") && !a.startsWith("TG_POS") && !a.startsWith("TID") && !a.startsWith("TG_SIZE")
                        && !a.startsWith("GRID_POS") && !a.startsWith("SIMD_")) args.add(a);
                cur.setLength(0);
                if (c == ')') return args;
                continue;
            }
            if (c == '(') depth++;
            if (c == ')') depth--;
            cur.append(c);
        }
    }

    /** Every source file of an API's kernel folder, comments removed. */
    private static String source(String api) throws IOException {
        try (Stream<Path> files = Files.list(KERNELS.resolve(api))) {
            StringBuilder sb = new StringBuilder();
            for (Path f : files.filter(p -> SOURCES.get(api).stream().anyMatch(s -> p.toString().endsWith(s))).sorted().toList())
                sb.append(Files.readString(f)).append('\n');
            String s = sb.toString().replaceAll("//[^\n]*", "").replaceAll("(?s)/\\*.*?\\*/", "");
            Matcher m = Pattern.compile("__global__").matcher(s);
            assertTrue(api.equals("cuda") ? m.find() : !s.isEmpty(), "no kernels in " + KERNELS.resolve(api));
            return s;
        }
    }
}
