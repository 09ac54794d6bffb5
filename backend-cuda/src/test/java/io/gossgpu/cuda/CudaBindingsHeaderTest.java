package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

import io.gossgpu.cuda.bindings.Cuda;
import java.io.IOException;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Checks the hand-written bindings against the CUDA toolkit's own cuda.h, where a toolkit is
 * installed (CI has one): every bound function's versioned name is what the header maps the API
 * name to, and its FunctionDescriptor has the header prototype's number of parameters, each of the
 * right kind (pointer, 8-byte integer, 4-byte integer, byte). Needs no GPU and no driver.
 */
class CudaBindingsHeaderTest {

    static Path findHeader() {
        List<Path> candidates = new ArrayList<>();
        for (String var : List.of("CUDA_HOME", "CUDA_PATH")) {
            String home = System.getenv(var);
            if (home != null && !home.isBlank()) {
                candidates.add(Path.of(home, "include", "cuda.h"));
            }
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(java.io.File.pathSeparator)) {
                Path nvcc = Path.of(dir, "nvcc");
                if (!dir.isBlank() && Files.isExecutable(nvcc)) {
                    try {
                        candidates.add(nvcc.toRealPath()
                                .getParent()
                                .resolveSibling("include")
                                .resolve("cuda.h"));
                    } catch (IOException e) {
                        // ignore this candidate
                    }
                }
            }
        }
        candidates.add(Path.of("/usr/local/cuda/include/cuda.h"));
        return candidates.stream().filter(Files::isRegularFile).findFirst().orElse(null);
    }

    @Test
    void descriptorsMatchCudaH() throws Exception {
        Path header = findHeader();
        if (header == null) {
            abort(
                    "no CUDA toolkit here (cuda.h not found); the bindings are checked against it where one is installed");
        }
        String text = Files.readString(header, StandardCharsets.ISO_8859_1);

        // #define cuMemAlloc cuMemAlloc_v2, #define cuMemcpyHtoD __CUDA_API_PTDS(cuMemcpyHtoD_v2): versioned symbol ->
        // API name
        Map<String, String> apiName = new HashMap<>();
        Matcher d = Pattern.compile("(?m)^\\s*#define\\s+(cu\\w+)\\s+(?:__CUDA_API_PT(?:DS|SZ)\\()?(cu\\w+)\\)?\\s*$")
                .matcher(text);
        while (d.find()) {
            apiName.putIfAbsent(d.group(2), d.group(1));
        }

        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Method m : Cuda.class.getDeclaredMethods()) {
            if (!Modifier.isPublic(m.getModifiers())
                    || !m.getName().startsWith("cu")
                    || m.getReturnType() != int.class) {
                continue;
            }
            String symbol = m.getName();
            Class<?> holder = Class.forName(Cuda.class.getName() + "$" + symbol);
            Field f = holder.getDeclaredField("DESC");
            f.setAccessible(true);
            FunctionDescriptor desc = (FunctionDescriptor) f.get(null);

            String declared = apiName.getOrDefault(symbol, symbol);
            Matcher p = Pattern.compile("CUresult\\s+CUDAAPI\\s+" + Pattern.quote(declared) + "\\s*\\(([^;]*?)\\)\\s*;")
                    .matcher(text);
            if (!p.find()) {
                problems.add(symbol + ": no prototype of " + declared + " in " + header);
                continue;
            }
            List<String> kinds = new ArrayList<>();
            String params = p.group(1).replaceAll("/\\*.*?\\*/", " ").strip();
            if (!params.equals("void") && !params.isEmpty()) {
                for (String param : params.split(",")) {
                    kinds.add(cKind(param.strip()));
                }
            }
            List<String> javaKinds = desc.argumentLayouts().stream()
                    .map(CudaBindingsHeaderTest::javaKind)
                    .toList();
            if (!kinds.equals(javaKinds)) {
                problems.add(symbol + " (declared as " + declared + "): cuda.h has " + kinds + ", binding has "
                        + javaKinds + " [" + params.replaceAll("\\s+", " ") + "]");
            }
            assertEquals(4, desc.returnLayout().orElseThrow().byteSize(), symbol + " returns CUresult");
            checked++;
        }
        assertTrue(checked >= 50, "checked only " + checked + " functions");
        if (!problems.isEmpty()) {
            fail(problems.size() + " binding(s) disagree with " + header + ":\n" + String.join("\n", problems));
        }
    }

    /** ptr, i64, i32 or i8 for one C parameter declaration such as "CUdeviceptr *dptr" or "unsigned int Flags". */
    static String cKind(String param) {
        if (param.contains("*")) {
            return "ptr";
        }
        String type = param.replaceAll("\\s+\\w+$", "").replace("const ", "").strip();
        return switch (type) {
            case "CUcontext", "CUmodule", "CUfunction", "CUstream", "CUevent", "CUgraph", "CUgraphExec" -> "ptr";
            case "CUdeviceptr", "size_t", "unsigned long long", "cuuint64_t" -> "i64";
            case "unsigned char" -> "i8";
            case "int",
                    "unsigned int",
                    "CUdevice",
                    "CUresult",
                    "CUdevice_attribute",
                    "CUfunction_attribute",
                    "CUstreamCaptureMode",
                    "CUjit_option" -> "i32";
            default -> "unknown C type '" + type + "'";
        };
    }

    static String javaKind(MemoryLayout l) {
        if (l instanceof AddressLayout) {
            return "ptr";
        }
        return switch ((int) l.byteSize()) {
            case 8 -> "i64";
            case 4 -> "i32";
            case 1 -> "i8";
            default -> "size " + l.byteSize();
        };
    }
}
