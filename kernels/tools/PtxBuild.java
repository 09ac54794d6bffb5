/*
 * Builds the CUDA kernels of goss-gpu: every kernels/cuda/*.cu becomes one PTX file per target
 * architecture, and ptxas compiles every PTX file so that invalid PTX fails the build.
 *
 * Run by the kernels module's pom (exec-maven-plugin, phase process-resources) with the Java source
 * launcher, so it needs nothing but the JDK that runs Maven:
 *
 *   java kernels/tools/PtxBuild.java --src DIR --out DIR --prebuilt DIR --work DIR --archs 80,90
 *                                    [--nvcc PATH|auto|none] [--update-prebuilt true|false]
 *
 * --nvcc none (-Dgoss.nvcc=none) builds as if there were no nvcc: prebuilt PTX or nothing.
 *
 * Output (in --out, which is target/classes/io/gossgpu/kernels/cuda):
 *   NAME.sm_80.ptx, NAME.sm_90.ptx, ...   nvcc -ptx -arch=compute_XX -O3 (no --use_fast_math)
 *   kernels.properties                    what was built, from where, and with which CUDA release
 *
 * Without nvcc the PTX files committed under --prebuilt are used, but only those whose recorded
 * source hash (prebuilt/SOURCES) matches the current .cu file; stale ones are named and left out.
 * With neither, it prints why and writes no kernels.properties, and the CUDA backend reports
 * "CUDA kernels were not built". The build itself only fails when a compiler it found fails.
 */

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

public final class PtxBuild {

    private static final String TAG = "[goss-gpu kernels] ";
    private static final boolean WINDOWS = System.getProperty("os.name", "").toLowerCase().startsWith("windows");

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = parseArgs(args);
        Path src = Path.of(required(opt, "src"));
        Path out = Path.of(required(opt, "out"));
        Path prebuilt = Path.of(required(opt, "prebuilt"));
        Path work = Path.of(required(opt, "work"));
        List<String> archs = List.of(required(opt, "archs").split(","));
        boolean updatePrebuilt = Boolean.parseBoolean(opt.getOrDefault("update-prebuilt", "false"));

        List<Path> sources = listSources(src);
        if (sources.isEmpty()) {
            System.out.println(TAG + "no .cu files in " + src + "; nothing to build");
            return;
        }
        Files.createDirectories(out);
        Files.createDirectories(work);
        Files.deleteIfExists(out.resolve("kernels.properties"));

        String nvccOption = opt.getOrDefault("nvcc", "auto");
        Path nvcc = nvccOption.equals("none") ? null : findTool("nvcc", nvccOption);
        Path ptxas = nvcc != null ? sibling(nvcc, "ptxas") : null;
        if (ptxas == null) {
            ptxas = findTool("ptxas", null);
        }

        Properties manifest = new Properties();
        List<String> built = new ArrayList<>();
        if (nvcc != null) {
            if (ptxas == null) {
                fail("found " + nvcc + " but no ptxas next to it or on PATH; cannot check the PTX");
            }
            String release = cudaRelease(nvcc);
            long newestInput = newestInput(src, sources);
            int compiled = 0;
            for (Path cu : sources) {
                String name = baseName(cu);
                for (String arch : archs) {
                    Path ptx = out.resolve(name + ".sm_" + arch + ".ptx");
                    Path cubin = work.resolve(name + ".sm_" + arch + ".cubin");
                    if (upToDate(ptx, cubin, newestInput)) {
                        continue;
                    }
                    run(List.of(nvcc.toString(), "-ptx", "-arch=compute_" + arch, "-O3", "-std=c++17",
                            "-o", ptx.toString(), cu.toString()), "nvcc " + cu.getFileName() + " for compute_" + arch);
                    run(List.of(ptxas.toString(), "-arch=sm_" + arch, "-O3", ptx.toString(), "-o", cubin.toString()),
                            "ptxas " + ptx.getFileName() + " for sm_" + arch);
                    compiled++;
                }
                built.add(name);
            }
            manifest.setProperty("source", "nvcc");
            manifest.setProperty("cuda.release", release);
            System.out.println(TAG + (compiled == 0 ? "CUDA PTX up to date" : "built and checked " + compiled + " PTX file(s)")
                    + " for " + built.size() + " kernel(s), sm_" + String.join("/sm_", archs) + ", with " + nvcc
                    + " (CUDA " + release + ")");
            if (updatePrebuilt) {
                updatePrebuilt(src, sources, out, prebuilt, archs, release);
            } else {
                warnIfPrebuiltStale(src, sources, prebuilt);
            }
        } else {
            Map<String, String> hashes = readPrebuiltSources(prebuilt);
            String release = hashes.getOrDefault("cuda.release", "unknown");
            List<String> stale = new ArrayList<>();
            for (Path cu : sources) {
                String name = baseName(cu);
                boolean complete = archs.stream().allMatch(a -> Files.isRegularFile(prebuilt.resolve(name + ".sm_" + a + ".ptx")));
                if (!complete) {
                    continue;
                }
                if (!sha256(cu).equals(hashes.get(cu.getFileName().toString()))) {
                    stale.add(cu.getFileName().toString());
                    continue;
                }
                for (String arch : archs) {
                    Path ptx = prebuilt.resolve(name + ".sm_" + arch + ".ptx");
                    Path dest = out.resolve(ptx.getFileName());
                    Files.copy(ptx, dest, StandardCopyOption.REPLACE_EXISTING);
                    if (ptxas != null) {
                        run(List.of(ptxas.toString(), "-arch=sm_" + arch, "-O3", dest.toString(), "-o",
                                work.resolve(name + ".sm_" + arch + ".prebuilt.cubin").toString()), "ptxas " + dest.getFileName());
                    }
                }
                built.add(name);
            }
            if (!stale.isEmpty()) {
                System.out.println(TAG + "WARNING: prebuilt PTX is older than its source and was left out: "
                        + String.join(", ", stale) + " (rebuild with nvcc and -Dgoss.cuda.updatePrebuilt=true)");
            }
            if (built.isEmpty()) {
                System.out.println(TAG + "WARNING: cannot build the CUDA kernels: nvcc not found (looked at -Dgoss.nvcc, "
                        + "$NVCC, $CUDA_HOME/bin, $CUDA_PATH/bin, PATH and /usr/local/cuda/bin) and no usable prebuilt PTX in "
                        + prebuilt + ". The CUDA backend will report: CUDA kernels were not built.");
                return;
            }
            manifest.setProperty("source", "prebuilt");
            manifest.setProperty("cuda.release", release);
            System.out.println(TAG + (nvccOption.equals("none") ? "nvcc not used (-Dgoss.nvcc=none)" : "nvcc not found") + "; using prebuilt PTX from " + prebuilt + " for " + String.join(", ", built)
                    + " (CUDA " + release + ")" + (ptxas != null ? ", checked with " + ptxas : ", not checked: no ptxas"));
        }
        manifest.setProperty("kernels", String.join(",", built));
        manifest.setProperty("archs", "sm_" + String.join(",sm_", archs));
        try (var w = Files.newBufferedWriter(out.resolve("kernels.properties"), StandardCharsets.UTF_8)) {
            // Properties.store writes a date comment; write by hand so the file is reproducible.
            w.write("# CUDA kernels packaged with goss-gpu (written by kernels/tools/PtxBuild.java)\n");
            for (Map.Entry<String, String> e : new TreeMap<>(toMap(manifest)).entrySet()) {
                w.write(e.getKey() + "=" + e.getValue() + "\n");
            }
        }
    }

    private static Map<String, String> toMap(Properties p) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String k : p.stringPropertyNames()) {
            m.put(k, p.getProperty(k));
        }
        return m;
    }

    private static boolean upToDate(Path ptx, Path cubin, long newestInput) throws IOException {
        if (!Files.isRegularFile(ptx) || !Files.isRegularFile(cubin)) {
            return false;
        }
        long p = Files.getLastModifiedTime(ptx).toMillis();
        long c = Files.getLastModifiedTime(cubin).toMillis();
        return p >= newestInput && c >= p;
    }

    /** Newest modification time of anything a .cu may include (.cu, .cuh, .h in the source folder) and of this tool. */
    private static long newestInput(Path src, List<Path> sources) throws IOException {
        long newest = 0;
        try (Stream<Path> s = Files.list(src)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                String n = p.getFileName().toString();
                if (n.endsWith(".cu") || n.endsWith(".cuh") || n.endsWith(".h")) {
                    newest = Math.max(newest, Files.getLastModifiedTime(p).toMillis());
                }
            }
        }
        Path self = src.getParent().resolve("tools").resolve("PtxBuild.java");
        if (Files.isRegularFile(self)) {
            newest = Math.max(newest, Files.getLastModifiedTime(self).toMillis());
        }
        return newest;
    }

    private static List<Path> listSources(Path src) throws IOException {
        if (!Files.isDirectory(src)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(src)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".cu")).sorted().toList();
        }
    }

    private static String baseName(Path cu) {
        String n = cu.getFileName().toString();
        return n.substring(0, n.length() - 3);
    }

    // ---- finding the toolkit ----

    private static Path findTool(String tool, String explicit) {
        if (explicit != null && !explicit.isBlank() && !explicit.equals("auto")) {
            Path p = Path.of(explicit);
            if (Files.isExecutable(p)) {
                return p;
            }
            fail("-Dgoss.nvcc=" + explicit + " is not an executable file");
        }
        List<Path> candidates = new ArrayList<>();
        String env = System.getenv(tool.toUpperCase());
        if (env != null && !env.isBlank()) {
            candidates.add(Path.of(env));
        }
        for (String var : List.of("CUDA_HOME", "CUDA_PATH")) {
            String home = System.getenv(var);
            if (home != null && !home.isBlank()) {
                candidates.add(Path.of(home, "bin", exe(tool)));
            }
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(java.io.File.pathSeparator)) {
                if (!dir.isBlank()) {
                    candidates.add(Path.of(dir, exe(tool)));
                }
            }
        }
        candidates.add(Path.of("/usr/local/cuda/bin", tool));
        for (Path p : candidates) {
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    private static Path sibling(Path tool, String name) {
        Path p = tool.resolveSibling(exe(name));
        return Files.isExecutable(p) ? p : null;
    }

    private static String exe(String tool) {
        return WINDOWS ? tool + ".exe" : tool;
    }

    /** "13.0" from nvcc --version ("Cuda compilation tools, release 13.0, V13.0.88"). */
    private static String cudaRelease(Path nvcc) {
        String text = run(List.of(nvcc.toString(), "--version"), "nvcc --version");
        Matcher m = Pattern.compile("release (\\d+\\.\\d+)").matcher(text);
        if (!m.find()) {
            fail("cannot read the CUDA release from `" + nvcc + " --version`: " + text.strip());
        }
        return m.group(1);
    }

    // ---- prebuilt PTX ----

    private static Map<String, String> readPrebuiltSources(Path prebuilt) throws IOException {
        Path f = prebuilt.resolve("SOURCES");
        Map<String, String> m = new LinkedHashMap<>();
        if (Files.isRegularFile(f)) {
            for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                String l = line.strip();
                if (l.isEmpty() || l.startsWith("#")) {
                    continue;
                }
                int eq = l.indexOf('=');
                if (eq > 0) {
                    m.put(l.substring(0, eq).strip(), l.substring(eq + 1).strip());
                }
            }
        }
        return m;
    }

    private static void warnIfPrebuiltStale(Path src, List<Path> sources, Path prebuilt) throws IOException {
        Map<String, String> hashes = readPrebuiltSources(prebuilt);
        if (hashes.isEmpty()) {
            return;
        }
        List<String> stale = new ArrayList<>();
        for (Path cu : sources) {
            String recorded = hashes.get(cu.getFileName().toString());
            if (recorded == null || !recorded.equals(sha256(cu))) {
                stale.add(cu.getFileName().toString());
            }
        }
        if (!stale.isEmpty()) {
            System.out.println(TAG + "note: prebuilt PTX in " + prebuilt + " is missing or out of date for "
                    + String.join(", ", stale) + "; refresh it with -Dgoss.cuda.updatePrebuilt=true before committing");
        }
    }

    private static void updatePrebuilt(Path src, List<Path> sources, Path out, Path prebuilt, List<String> archs,
                                       String release) throws IOException {
        Files.createDirectories(prebuilt);
        StringBuilder sb = new StringBuilder();
        sb.append("# sha256 of each kernels/cuda/*.cu that the PTX files here were built from; written by\n");
        sb.append("# kernels/tools/PtxBuild.java with -Dgoss.cuda.updatePrebuilt=true. Used only when nvcc is absent.\n");
        sb.append("cuda.release=").append(release).append('\n');
        for (Path cu : sources) {
            String name = baseName(cu);
            for (String arch : archs) {
                String f = name + ".sm_" + arch + ".ptx";
                Files.copy(out.resolve(f), prebuilt.resolve(f), StandardCopyOption.REPLACE_EXISTING);
            }
            sb.append(cu.getFileName()).append('=').append(sha256(cu)).append('\n');
        }
        Files.writeString(prebuilt.resolve("SOURCES"), sb.toString(), StandardCharsets.UTF_8);
        System.out.println(TAG + "updated prebuilt PTX in " + prebuilt);
    }

    private static String sha256(Path file) throws IOException {
        try {
            // Hash with normalised line endings so a Windows checkout (CRLF) matches.
            String text = Files.readString(file, StandardCharsets.UTF_8).replace("\r\n", "\n");
            byte[] d = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---- processes, arguments, failure ----

    private static String run(List<String> command, String what) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int rc = p.waitFor();
            if (rc != 0) {
                fail(what + " failed (exit " + rc + "):\n  " + String.join(" ", command) + "\n" + output.strip());
            }
            return output;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void fail(String message) {
        System.err.println(TAG + "ERROR: " + message);
        System.exit(1);
    }

    private static Map<String, String> parseArgs(String[] args) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                fail("usage: PtxBuild --src DIR --out DIR --prebuilt DIR --work DIR --archs 80,90 [--nvcc PATH] [--update-prebuilt B]"
                        + " (bad argument: " + args[i] + ")");
            }
            m.put(args[i].substring(2), args[++i]);
        }
        return m;
    }

    private static String required(Map<String, String> opt, String key) {
        String v = opt.get(key);
        if (v == null) {
            fail("missing --" + key);
        }
        return v;
    }
}
