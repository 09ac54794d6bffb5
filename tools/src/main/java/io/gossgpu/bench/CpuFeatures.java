package io.gossgpu.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The processor's name and the instruction-set flags that decide which CPU kernels can run fast
 * (integer dot products, FP16/BF16 conversion, wide vectors), read from Linux's /proc/cpuinfo. Elsewhere
 * the flags are unknown and say so.
 *
 * @param name    the model name ("AMD EPYC 7B13"), or the os.arch when unknown
 * @param present the flags of {@link #WATCHED} this CPU has, in that order
 * @param absent  the flags of {@link #WATCHED} it lacks; empty with {@code present} when nothing is known
 * @param known   whether the flags were read at all
 */
public record CpuFeatures(String name, List<String> present, List<String> absent, boolean known) {
    /** x86 flags first, then the aarch64 ones (/proc/cpuinfo's "Features"); only those of this machine's kind show. */
    static final List<String> WATCHED_X86 = List.of(
            "avx2",
            "fma",
            "f16c",
            "avx512f",
            "avx512_vnni",
            "avx_vnni",
            "avx512_bf16",
            "amx_tile",
            "amx_int8",
            "amx_bf16");

    static final List<String> WATCHED_ARM = List.of("asimd", "asimddp", "i8mm", "bf16", "sve");

    public CpuFeatures {
        present = List.copyOf(present);
        absent = List.copyOf(absent);
    }

    /** This machine's. */
    public static CpuFeatures detect() {
        Path p = Path.of("/proc/cpuinfo");
        try {
            if (Files.isReadable(p)) return parse(Files.readString(p));
        } catch (IOException | RuntimeException e) {
            // fall through: unknown
        }
        return new CpuFeatures(System.getProperty("os.arch", "?"), List.of(), List.of(), false);
    }

    /** From the text of a /proc/cpuinfo (the first processor's entry is enough: flags are uniform). */
    static CpuFeatures parse(String cpuinfo) {
        String name = null, flags = null;
        for (String line : cpuinfo.split("\n")) {
            int colon = line.indexOf(':');
            if (colon < 0) continue;
            String key = line.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                    value = line.substring(colon + 1).trim();
            if (name == null && (key.equals("model name") || key.equals("cpu model"))) name = value;
            if (flags == null && (key.equals("flags") || key.equals("features"))) flags = value;
        }
        if (name == null) name = System.getProperty("os.arch", "?");
        if (flags == null) return new CpuFeatures(name, List.of(), List.of(), false);
        Set<String> have = Arrays.stream(flags.split("\\s+")).collect(Collectors.toSet());
        List<String> watched = have.contains("asimd") ? WATCHED_ARM : WATCHED_X86;
        List<String> present = new ArrayList<>(), absent = new ArrayList<>();
        for (String f : watched) (have.contains(f) ? present : absent).add(f);
        return new CpuFeatures(name, present, absent, true);
    }

    /** e.g. "AMD EPYC 7B13, flags: avx2 fma f16c (not: avx512f avx512_vnni avx_vnni avx512_bf16 amx)". */
    public String describe() {
        if (!known) return name + ", flags: unknown (no /proc/cpuinfo)";
        List<String> not = new ArrayList<>(absent);
        // the three AMX flags come together: one word when all are missing
        if (not.containsAll(List.of("amx_tile", "amx_int8", "amx_bf16"))) {
            not.removeAll(List.of("amx_tile", "amx_int8", "amx_bf16"));
            not.add("amx");
        }
        return name + ", flags: " + (present.isEmpty() ? "none of interest" : String.join(" ", present))
                + (!not.isEmpty() ? " (not: " + String.join(" ", not) + ")" : "");
    }
}
