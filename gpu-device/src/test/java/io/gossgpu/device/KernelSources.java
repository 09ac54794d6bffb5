package io.gossgpu.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The kernel sources of backend-cuda/kernels, backend-opencl/kernels and backend-metal/kernels as the contract tests read them: the kernels
 * of one op's file with the params struct each takes, and a kernel's parameter list. Reads text; needs no device.
 */
final class KernelSources {
    /** The repository root: tests run in their module's folder. */
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    /** An API's kernel sources: backend-API/kernels. */
    static Path dir(String api) {
        return ROOT.resolve("backend-" + api).resolve("kernels");
    }
    /** The APIs, each with the suffix of its one file per op and its shared headers. */
    static final Map<String, String> OP_SUFFIX = Map.of("cuda", ".cu", "opencl", ".cl", "metal", ".metal");

    private static final Map<String, List<String>> SUFFIXES =
            Map.of("cuda", List.of(".cu", ".cuh"), "opencl", List.of(".cl"), "metal", List.of(".metal", ".h"));

    private KernelSources() {}

    /** A kernel argument that is a buffer: a pointer (CUDA), {@code __global} (OpenCL), {@code BUF(...)} (Metal). */
    static boolean isBuffer(String api, String arg) {
        return switch (api) {
            case "cuda" -> arg.contains("*");
            case "opencl" -> arg.contains("__global");
            default -> arg.startsWith("BUF(");
        };
    }

    /**
     * {@code name}'s arguments on {@code api} (from {@code src}): {@code buffers} buffers first, no other buffer, and one
     * {@code params} struct last; on Metal the buffer indices run 0.. with the params at the next.
     */
    static List<String> assertBuffersThenParams(String api, String src, String name, int buffers, String params) {
        List<String> args = arguments(api, src, name);
        String last = args.getLast();
        org.junit.jupiter.api.Assertions.assertTrue(
                last.contains(params), api + " " + name + ": the last argument is " + last);
        org.junit.jupiter.api.Assertions.assertEquals(
                buffers, args.stream().filter(a -> isBuffer(api, a)).count(), api + " " + name + " buffers: " + args);
        for (int j = 0; j < buffers; j++)
            assertTrue(
                    isBuffer(api, args.get(j)),
                    api + " " + name + ": argument " + j + " is not a buffer: " + args.get(j));
        if (api.equals("metal"))
            for (int j = 0; j <= buffers; j++)
                assertTrue(
                        args.get(j).replaceAll("\\s", "").endsWith("," + j + ")"),
                        "metal " + name + ": index of " + args.get(j));
        return args;
    }

    /** Every source file of an API's kernel folder, comments removed. */
    static String source(String api) {
        try (Stream<Path> files = Files.list(dir(api))) {
            StringBuilder sb = new StringBuilder();
            for (Path f : files.filter(p -> SUFFIXES.get(api).stream()
                            .anyMatch(s -> p.toString().endsWith(s)))
                    .sorted()
                    .toList()) sb.append(Files.readString(f)).append('\n');
            assertTrue(sb.length() > 0, "no kernel sources in " + dir(api));
            return uncomment(sb.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The source of {@code op}'s file on {@code api} ({@code backend-cuda/kernels/rmsnorm.cu}), comments removed; null when there is none. */
    static String opSource(String api, String op) {
        Path f = dir(api).resolve(op + OP_SUFFIX.get(api));
        try {
            return Files.exists(f) ? uncomment(Files.readString(f)) : null;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The ops with a file in an API's folder (file names without suffix), the shared headers and includers left out. */
    static List<String> opFiles(String api) {
        try (Stream<Path> files = Files.list(dir(api))) {
            return files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(OP_SUFFIX.get(api)))
                    .map(n -> n.substring(0, n.length() - OP_SUFFIX.get(api).length()))
                    .filter(n -> !n.equals("goss") && !n.equals("common"))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The kernels of {@code op}'s file on {@code api}, in source order, each with the name of the params struct it takes
     * last. CUDA's entry points are read from the packaged PTX of the file ({@code prebuilt/OP.ptx}), because macros
     * make some of them (one per weight format); an entry whose signature is not written out takes the file's one
     * params struct.
     */
    static Map<String, String> kernels(String api, String op) {
        String src = opSource(api, op);
        Map<String, String> out = new LinkedHashMap<>();
        if (src == null) return out;
        if (api.equals("cuda")) {
            List<String> own = List.copyOf(KernelParamsCheck.structs(src).keySet());
            for (Matcher m = Pattern.compile("\\.entry (\\w+)\\(").matcher(ptx(op)); m.find(); ) {
                String name = m.group(1);
                String struct =
                        src.contains("__global__ void " + name + "(") ? structOf(arguments(api, src, name)) : null;
                if (struct == null) {
                    assertEquals(
                            1,
                            own.size(),
                            "cuda " + name + ": its signature is made by a macro and " + op + ".cu declares " + own);
                    struct = own.getFirst();
                }
                out.put(name, struct);
            }
            return out;
        }
        Pattern open = Pattern.compile(
                api.equals("opencl") ? "__kernel\\s+void\\s+(\\w+)\\s*\\(" : "KERNEL\\((\\w+)\\)\\s*\\(");
        for (Matcher m = open.matcher(src); m.find(); ) out.put(m.group(1), structOf(arguments(api, src, m.group(1))));
        return out;
    }

    private static String ptx(String op) {
        try {
            return Files.readString(dir("cuda").resolve("prebuilt/" + op + ".ptx"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The params struct among a kernel's arguments (its last), or null when it takes none. */
    private static String structOf(List<String> args) {
        if (args.isEmpty()) return null;
        Matcher m = Pattern.compile("(\\w+Params)").matcher(args.getLast());
        return m.find() ? m.group(1) : null;
    }

    /** The kernel's parameter declarations, in order (group-memory and thread-position arguments left out). */
    static List<String> arguments(String api, String src, String name) {
        String open = switch (api) {
            case "cuda" -> "__global__ void " + name + "(";
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
                if (!a.startsWith("__local")
                        && !a.startsWith("TG_BUF")
                        && !a.startsWith("TG_POS")
                        && !a.startsWith("TID")
                        && !a.startsWith("TG_SIZE")
                        && !a.startsWith("GRID_POS")
                        && !a.startsWith("SIMD_")) args.add(a);
                cur.setLength(0);
                if (c == ')') return args;
                continue;
            }
            if (c == '(') depth++;
            if (c == ')') depth--;
            cur.append(c);
        }
    }

    private static String uncomment(String s) {
        return s.replaceAll("//[^\n]*", "").replaceAll("(?s)/\\*.*?\\*/", "");
    }
}
