package io.gossgpu.device;

import io.gossgpu.GossException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A GPU program's source as one text, for APIs that compile a string (OpenCL's clCreateProgramWithSource, Metal's
 * newLibraryWithSource) and so have no folder to include from: the kernels module's root file of an API
 * ({@code kernels/<api>/goss.cl}, {@code goss.metal}) with each {@code #include "FILE"} line replaced by that file of
 * the same folder, each file once. The root file's include lines are the one list of the program's files.
 */
public final class KernelSource {
    private static final Pattern INCLUDE = Pattern.compile("^#include \"([\\w.]+)\"\\s*$");

    private KernelSource() {}

    /** {@code root} of the class-path folder {@code io/gossgpu/kernels/<api>/}, its includes inlined. */
    public static String inlined(String api, String root) {
        StringBuilder out = new StringBuilder();
        inline(api, root, out, new HashSet<>());
        return out.toString();
    }

    private static void inline(String api, String file, StringBuilder out, Set<String> done) {
        if (!done.add(file)) return;
        String path = "io/gossgpu/kernels/" + api + "/" + file;
        try (InputStream in = KernelSource.class.getClassLoader().getResourceAsStream(path)) {
            if (in == null) throw new GossException(path + " is missing from the class path (the kernels jar)");
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n", -1)) {
                Matcher m = INCLUDE.matcher(line);
                if (m.matches()) inline(api, m.group(1), out, done);
                else out.append(line).append('\n');
            }
        } catch (IOException e) {
            throw new GossException("cannot read the kernel source " + path + ": " + e.getMessage(), e);
        }
    }
}
