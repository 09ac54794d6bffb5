/*
 * Builds the CUDA kernels of goss-gpu: every backend-cuda/kernels/*.cu becomes one PTX file per target
 * architecture, and ptxas compiles every PTX file so that invalid PTX fails the build.
 *
 * Each PTX file is written at the lowest PTX ISA version that ptxas accepts for it, so that older drivers can
 * load it (a driver JIT-compiles PTX up to the ISA of its own CUDA version: ISA 6.3 is CUDA 10.0, 7.0 is 11.0,
 * 7.8 is 11.8, 9.0 is 13.0). nvcc always writes its own release's ISA; the build lowers the `.version` line and
 * lets ptxas judge: ptxas refuses an instruction or directive that the declared ISA lacks ("Feature 'redux'
 * requires PTX ISA .version 7.0 or later") and an ISA that predates the target ("PTX .version 6.5 does not
 * support .target sm_80"). The versions tried start at the lowest that ptxas accepts for the target at all
 * (found once per target with an empty module) and rise until the kernel assembles.
 *
 * Run by the kernels-cuda module's pom (exec-maven-plugin, phase process-resources) with the Java source
 * launcher, so it needs nothing but the JDK that runs Maven:
 *
 *   java backend-cuda/kernels/tools/PtxBuild.java --src DIR --out DIR --prebuilt DIR --work DIR --archs 80,90
 *                                    [--nvcc PATH|auto|none] [--update-prebuilt true|false]
 *   java backend-cuda/kernels/tools/PtxBuild.java --src DIR --prebuilt DIR --check-prebuilt true
 *                                    (exits 1, naming them, when committed PTX is missing or older than its source)
 *
 * --nvcc none (-Dkernels.nvcc=none) builds as if there were no nvcc: prebuilt PTX or nothing.
 *
 * Output (in --out, which is target/classes/io/gossgpu/kernels/cuda):
 *   NAME.sm_75.ptx, NAME.sm_80.ptx, ...   nvcc -ptx -arch=compute_XX -O3 (no --use_fast_math), at the lowest ISA
 *   kernels.properties                    what was built, from where, with which CUDA release, and each
 *                                         target's PTX ISA (ptx.isa.sm_XX: the highest of its files)
 *
 * Without nvcc the PTX files committed under --prebuilt are used, but only those whose recorded
 * source hash (prebuilt/SOURCES: the .cu file and every header of the folder) matches; stale ones are named and
 * left out. NAME.ptx, the PTX of the lowest target, is committed for each kernel file: nvcc writes the same PTX for
 * every target but for the `.version` and `.target` lines unless the source asks for __CUDA_ARCH__, so the others
 * are that file with the two lines each target had (recorded in SOURCES as NAME.isa.sm_XX). A target whose PTX
 * differs beyond those lines (moe.cu: its tensor-core kernels are stubs below sm_80) gets its own NAME.sm_XX.ptx,
 * from which the targets above it are derived in turn; -Dkernels.updatePrebuilt=true decides which and writes them.
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
        Path out = Path.of(opt.getOrDefault("out", "."));
        Path prebuilt = Path.of(required(opt, "prebuilt"));
        Path work = Path.of(opt.getOrDefault("work", "."));
        List<String> archs = List.of(opt.getOrDefault("archs", "75,80,90").split(","));
        boolean updatePrebuilt = Boolean.parseBoolean(opt.getOrDefault("update-prebuilt", "false"));

        List<Path> sources = listSources(src);
        if (Boolean.parseBoolean(opt.getOrDefault("check-prebuilt", "false"))) {
            List<String> stale = stalePrebuilt(src, sources, prebuilt);
            if (!stale.isEmpty()) {
                fail("the committed PTX in " + prebuilt + " is missing or older than its source for " + String.join(", ", stale)
                        + ": rebuild it with nvcc (./gossw mvn -pl backend-cuda/kernels process-resources -Dkernels.updatePrebuilt=true) and commit it");
            }
            System.out.println(TAG + "committed PTX matches its sources: " + sources.size() + " kernel file(s)");
            return;
        }
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
            Map<String, Isa> floors = new LinkedHashMap<>();
            int compiled = 0;
            for (Path cu : sources) {
                String name = baseName(cu);
                for (String arch : archs) {
                    Path ptx = out.resolve(name + ".sm_" + arch + ".ptx");
                    Path cubin = work.resolve(name + ".sm_" + arch + ".cubin");
                    if (upToDate(ptx, cubin, newestInput)) {
                        continue;
                    }
                    Path nvccPtx = work.resolve(name + ".sm_" + arch + ".nvcc.ptx");
                    run(List.of(nvcc.toString(), "-ptx", "-arch=compute_" + arch, "-O3", "-std=c++17",
                            "-o", nvccPtx.toString(), cu.toString()), "nvcc " + cu.getFileName() + " for compute_" + arch);
                    Isa floor = floors.get(arch);
                    if (floor == null) {
                        floor = isaFloor(ptxas, arch, work, Isa.of(readPtx(nvccPtx)));
                        floors.put(arch, floor);
                    }
                    lowestIsa(ptxas, arch, nvccPtx, floor, ptx, cubin);
                    compiled++;
                }
                built.add(name);
            }
            manifest.setProperty("source", "nvcc");
            manifest.setProperty("cuda.release", release);
            System.out.println(TAG + (compiled == 0 ? "CUDA PTX up to date" : "built and checked " + compiled + " PTX file(s)")
                    + " for " + built.size() + " kernel(s), " + describeIsas(out, built, archs) + ", with " + nvcc
                    + " (CUDA " + release + ")");
            if (updatePrebuilt) {
                updatePrebuilt(src, sources, out, prebuilt, archs, release);
            } else {
                warnIfPrebuiltStale(src, sources, prebuilt);
            }
        } else {
            Map<String, String> recorded = readPrebuiltSources(prebuilt);
            String release = recorded.getOrDefault("cuda.release", "unknown");
            List<String> stale = stalePrebuilt(src, sources, prebuilt);
            for (Path cu : sources) {
                String name = baseName(cu);
                if (stale.contains(cu.getFileName().toString())
                        || !archs.stream().allMatch(a -> recorded.containsKey(name + ".isa.sm_" + a))) {
                    continue;
                }
                String base = readPtx(prebuilt.resolve(name + ".ptx"));
                for (String arch : archs) {
                    Path own = prebuilt.resolve(name + ".sm_" + arch + ".ptx");
                    if (Files.isRegularFile(own)) {
                        base = readPtx(own); // this target's PTX differs: it, and the targets above it, derive from its own file
                    }
                    Path dest = out.resolve(name + ".sm_" + arch + ".ptx");
                    write(dest, forTarget(base, arch, recorded.get(name + ".isa.sm_" + arch)));
                    if (ptxas != null) {
                        run(List.of(ptxas.toString(), "-arch=sm_" + arch, "-O3", dest.toString(), "-o",
                                work.resolve(name + ".sm_" + arch + ".prebuilt.cubin").toString()), "ptxas " + dest.getFileName());
                    }
                }
                built.add(name);
            }
            if (!stale.isEmpty()) {
                System.out.println(TAG + "WARNING: prebuilt PTX is older than its source and was left out: "
                        + String.join(", ", stale) + " (rebuild with nvcc and -Dkernels.updatePrebuilt=true)");
            }
            if (built.isEmpty()) {
                System.out.println(TAG + "WARNING: cannot build the CUDA kernels: nvcc not found (looked at -Dkernels.nvcc, "
                        + "$NVCC, $CUDA_HOME/bin, $CUDA_PATH/bin, PATH and /usr/local/cuda/bin) and no usable prebuilt PTX in "
                        + prebuilt + ". The CUDA backend will report: CUDA kernels were not built.");
                return;
            }
            manifest.setProperty("source", "prebuilt");
            manifest.setProperty("cuda.release", release);
            System.out.println(TAG + (nvccOption.equals("none") ? "nvcc not used (-Dkernels.nvcc=none)" : "nvcc not found") + "; using prebuilt PTX from " + prebuilt + " for " + String.join(", ", built)
                    + " (CUDA " + release + ", " + describeIsas(out, built, archs) + ")"
                    + (ptxas != null ? ", checked with " + ptxas : ", not checked: no ptxas"));
        }
        manifest.setProperty("kernels", String.join(",", built));
        manifest.setProperty("archs", "sm_" + String.join(",sm_", archs));
        for (String arch : archs) {
            manifest.setProperty("ptx.isa.sm_" + arch, highestIsa(out, built, arch).toString());
        }
        try (var w = Files.newBufferedWriter(out.resolve("kernels.properties"), StandardCharsets.UTF_8)) {
            // Properties.store writes a date comment; write by hand so the file is reproducible.
            w.write("# CUDA kernels packaged with goss-gpu (written by backend-cuda/kernels/tools/PtxBuild.java)\n");
            for (Map.Entry<String, String> e : new TreeMap<>(toMap(manifest)).entrySet()) {
                w.write(e.getKey() + "=" + e.getValue() + "\n");
            }
        }
    }

    // ---- the lowest PTX ISA version ----

    /** A PTX ISA version, as the `.version` directive writes it. */
    record Isa(int major, int minor) implements Comparable<Isa> {
        private static final Pattern VERSION = Pattern.compile("(?m)^\\.version\\s+(\\d+)\\.(\\d+)\\s*$");

        /** The `.version` of a PTX text. */
        static Isa of(String ptx) {
            Matcher m = VERSION.matcher(ptx);
            if (!m.find()) {
                fail("PTX without a .version directive");
            }
            return new Isa(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
        }

        /** The next version number to try: minors 0 to 9, then the next major (ptxas names the ones that do not exist). */
        Isa next() {
            return minor < 9 ? new Isa(major, minor + 1) : new Isa(major + 1, 0);
        }

        Isa previous() {
            return minor > 0 ? new Isa(major, minor - 1) : new Isa(major - 1, 9);
        }

        String apply(String ptx) {
            return VERSION.matcher(ptx).replaceFirst(".version " + this);
        }

        @Override
        public int compareTo(Isa o) {
            return major != o.major ? Integer.compare(major, o.major) : Integer.compare(minor, o.minor);
        }

        @Override
        public String toString() {
            return major + "." + minor;
        }
    }

    /**
     * The lowest ISA at which ptxas assembles an empty module for sm_{arch}: going down from what nvcc wrote, past
     * numbers that are no ISA ("Unsupported .version"), until ptxas says the ISA does not know the target.
     */
    private static Isa isaFloor(Path ptxas, String arch, Path work, Isa emitted) {
        Path probe = work.resolve("isa-probe.sm_" + arch + ".ptx");
        Isa lowest = null;
        for (Isa v = emitted; v.major() > 0; v = v.previous()) {
            write(probe, ".version " + v + "\n.target sm_" + arch + "\n.address_size 64\n.visible .entry goss_isa_probe()\n{\n\tret;\n}\n");
            Outcome o = tryRun(List.of(ptxas.toString(), "-arch=sm_" + arch, probe.toString(), "-o", work.resolve("isa-probe.cubin").toString()));
            if (o.ok()) {
                lowest = v;
            } else if (!o.output().contains("Unsupported .version")) {
                break;
            }
        }
        if (lowest == null) {
            fail("ptxas " + ptxas + " accepts no PTX ISA up to " + emitted + " for sm_" + arch);
        }
        return lowest;
    }

    /**
     * Writes {@code nvccPtx} to {@code ptx} at the lowest ISA from {@code floor} up that ptxas assembles for the
     * target (the cubin is kept as the up-to-date stamp); fails with ptxas's message at nvcc's own ISA.
     */
    private static void lowestIsa(Path ptxas, String arch, Path nvccPtx, Isa floor, Path ptx, Path cubin) {
        String text = readPtx(nvccPtx);
        Isa emitted = Isa.of(text);
        List<String> command = List.of(ptxas.toString(), "-arch=sm_" + arch, "-O3", ptx.toString(), "-o", cubin.toString());
        for (Isa v = floor; v.compareTo(emitted) < 0; v = v.next()) {
            write(ptx, v.apply(text));
            if (tryRun(command).ok()) {
                return;
            }
        }
        write(ptx, text);
        run(command, "ptxas " + ptx.getFileName() + " for sm_" + arch);
    }

    /** The highest `.version` among one target's PTX files in {@code out}. */
    private static Isa highestIsa(Path out, List<String> kernels, String arch) {
        Isa highest = null;
        for (String k : kernels) {
            Isa v = Isa.of(readPtx(out.resolve(k + ".sm_" + arch + ".ptx")));
            if (highest == null || v.compareTo(highest) > 0) {
                highest = v;
            }
        }
        return highest;
    }

    /** "sm_75 at PTX ISA 6.3, sm_80 at 7.0, sm_90 at 7.8". */
    private static String describeIsas(Path out, List<String> kernels, List<String> archs) {
        List<String> parts = new ArrayList<>();
        for (String arch : archs) {
            parts.add("sm_" + arch + (parts.isEmpty() ? " at PTX ISA " : " at ") + highestIsa(out, kernels, arch));
        }
        return String.join(", ", parts);
    }

    private static String readPtx(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void write(Path p, String text) {
        try {
            Files.writeString(p, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
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
        Path self = src.toAbsolutePath().resolve("tools").resolve("PtxBuild.java");
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
            fail("-Dkernels.nvcc=" + explicit + " is not an executable file");
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

    /** The .cu files whose committed PTX is missing or was built from another text of them or of the headers. */
    private static List<String> stalePrebuilt(Path src, List<Path> sources, Path prebuilt) throws IOException {
        Map<String, String> recorded = readPrebuiltSources(prebuilt);
        List<String> stale = new ArrayList<>();
        for (Path cu : sources) {
            String file = cu.getFileName().toString();
            if (!Files.isRegularFile(prebuilt.resolve(baseName(cu) + ".ptx")) || !sourceHash(src, cu).equals(recorded.get(file))) {
                stale.add(file);
            }
        }
        return stale;
    }

    private static void warnIfPrebuiltStale(Path src, List<Path> sources, Path prebuilt) throws IOException {
        List<String> stale = stalePrebuilt(src, sources, prebuilt);
        if (!stale.isEmpty()) {
            System.out.println(TAG + "note: prebuilt PTX in " + prebuilt + " is missing or out of date for "
                    + String.join(", ", stale) + "; refresh it with -Dkernels.updatePrebuilt=true before committing");
        }
    }

    /** A target's PTX from the committed one: its `.version` (the ISA recorded for it) and its `.target`. */
    private static String forTarget(String ptx, String arch, String isa) {
        String[] v = isa.split("\\.");
        return new Isa(Integer.parseInt(v[0]), Integer.parseInt(v[1])).apply(ptx)
                .replaceFirst("(?m)^\\.target\\s+sm_\\d+\\s*$", ".target sm_" + arch);
    }

    private static void updatePrebuilt(Path src, List<Path> sources, Path out, Path prebuilt, List<String> archs,
                                       String release) throws IOException {
        Files.createDirectories(prebuilt);
        StringBuilder sb = new StringBuilder();
        sb.append("# What the PTX files here were built from, written by backend-cuda/kernels/tools/PtxBuild.java with\n");
        sb.append("# -Dkernels.updatePrebuilt=true and used only when nvcc is absent: NAME.cu = sha256 of the .cu file and every\n");
        sb.append("# header of the folder; NAME.ptx is the PTX of the first target, NAME.isa.sm_XX the .version of each target's;\n");
        sb.append("# NAME.sm_XX.ptx, where present, that target's own PTX (it differs beyond .version/.target), also for the ones above.\n");
        sb.append("cuda.release=").append(release).append('\n');
        try (Stream<Path> old = Files.list(prebuilt)) {
            for (Path p : (Iterable<Path>) old::iterator) {
                if (p.getFileName().toString().endsWith(".ptx")) {
                    Files.delete(p);
                }
            }
        }
        for (Path cu : sources) {
            String name = baseName(cu);
            String base = readPtx(out.resolve(name + ".sm_" + archs.get(0) + ".ptx"));
            write(prebuilt.resolve(name + ".ptx"), base);
            sb.append(cu.getFileName()).append('=').append(sourceHash(src, cu)).append('\n');
            for (String arch : archs) {
                String ptx = readPtx(out.resolve(name + ".sm_" + arch + ".ptx"));
                String isa = Isa.of(ptx).toString();
                if (!forTarget(base, arch, isa).equals(ptx)) {
                    // differs beyond .version and .target (the source asks for __CUDA_ARCH__): this target's own file
                    base = ptx;
                    write(prebuilt.resolve(name + ".sm_" + arch + ".ptx"), ptx);
                    System.out.println(TAG + name + ".sm_" + arch + ".ptx differs from the target below it: committed as its own file");
                }
                sb.append(name).append(".isa.sm_").append(arch).append('=').append(isa).append('\n');
            }
        }
        Files.writeString(prebuilt.resolve("SOURCES"), sb.toString(), StandardCharsets.UTF_8);
        System.out.println(TAG + "updated prebuilt PTX in " + prebuilt);
    }

    /** sha256 of a .cu file followed by every header of its folder (.cuh, .h, by name): what its PTX depends on. */
    private static String sourceHash(Path src, Path cu) throws IOException {
        StringBuilder text = new StringBuilder(normalized(cu));
        try (Stream<Path> s = Files.list(src)) {
            for (Path h : s.filter(p -> p.getFileName().toString().endsWith(".cuh") || p.getFileName().toString().endsWith(".h"))
                    .sorted().toList()) {
                text.append("\n// ").append(h.getFileName()).append('\n').append(normalized(h));
            }
        }
        return sha256(text.toString());
    }

    /** The text with normalised line endings, so that a Windows checkout (CRLF) hashes the same. */
    private static String normalized(Path file) throws IOException {
        return Files.readString(file, StandardCharsets.UTF_8).replace("\r\n", "\n");
    }

    private static String sha256(String text) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---- processes, arguments, failure ----

    private static String run(List<String> command, String what) {
        Outcome o = tryRun(command);
        if (!o.ok()) {
            fail(what + " failed (exit " + o.exitCode() + "):\n  " + String.join(" ", command) + "\n" + o.output().strip());
        }
        return o.output();
    }

    private record Outcome(int exitCode, String output) {
        boolean ok() {
            return exitCode == 0;
        }
    }

    private static Outcome tryRun(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return new Outcome(p.waitFor(), output);
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
