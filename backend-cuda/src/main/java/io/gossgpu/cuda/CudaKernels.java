package io.gossgpu.cuda;

import io.gossgpu.cuda.bindings.CudaException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The PTX the kernels-cuda module packages: {@code io/gossgpu/kernels/cuda/NAME.sm_XX.ptx} and the
 * {@code kernels.properties} that the build writes next to them (see backend-cuda/kernels/tools/PtxBuild.java).
 */
public final class CudaKernels {

    /** Class-path folder of the PTX resources. */
    public static final String RESOURCE_DIR = "io/gossgpu/kernels/cuda/";

    public static final String MANIFEST = RESOURCE_DIR + "kernels.properties";
    /** Reason given when the build had no nvcc and no prebuilt PTX. */
    public static final String NOT_BUILT = "CUDA unavailable: CUDA kernels were not built "
            + "(nvcc was not found when goss-gpu was built; see backend-cuda/kernels/README.md)";

    private CudaKernels() {}

    /**
     * What was built.
     *
     * @param source      "nvcc" or "prebuilt"
     * @param cudaRelease the CUDA release whose nvcc compiled the PTX, e.g. "13.0"
     * @param kernels     kernel file names without extension, e.g. [add, rmsnorm]
     * @param archs       e.g. [sm_75, sm_80, sm_90], ascending
     * @param isa         each target's PTX ISA version (the highest of its files), e.g. sm_80 → "7.0"; a target
     *                    missing here (a manifest from before the build lowered the ISA) has nvcc's own
     */
    public record Manifest(
            String source, String cudaRelease, List<String> kernels, List<String> archs, Map<String, String> isa) {
        /** The PTX ISA of a target's files, e.g. "7.0". */
        public String isaOf(String arch) {
            return isa.getOrDefault(arch, "of CUDA " + cudaRelease);
        }

        /** The oldest driver (cuDriverGetVersion encoding) that loads a target's PTX. */
        public int cudaNeeded(String arch) {
            return CudaVersions.cudaForIsa(isa.getOrDefault(arch, "")).orElse(releaseToVersion(cudaRelease));
        }
    }

    /** The packaged manifest, or empty when the kernels were not built. */
    public static Optional<Manifest> manifest() {
        try (InputStream in = loader().getResourceAsStream(MANIFEST)) {
            if (in == null) {
                return Optional.empty();
            }
            Properties p = new Properties();
            p.load(in);
            List<String> archs = split(p.getProperty("archs", "")).stream()
                    .sorted((a, b) -> Integer.compare(archNumber(a), archNumber(b)))
                    .toList();
            Map<String, String> isa = new TreeMap<>();
            for (String a : archs) {
                String v = p.getProperty("ptx.isa." + a);
                if (v != null) {
                    isa.put(a, v.strip());
                }
            }
            return Optional.of(new Manifest(
                    p.getProperty("source", "?"),
                    p.getProperty("cuda.release", "?"),
                    split(p.getProperty("kernels", "")),
                    archs,
                    Map.copyOf(isa)));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + MANIFEST, e);
        }
    }

    /** Why the kernels cannot be used, or empty when they are packaged. */
    public static Optional<String> unavailableReason() {
        return manifest().isPresent() ? Optional.empty() : Optional.of(NOT_BUILT);
    }

    /**
     * Why a driver of this version cannot run the packaged PTX on a device of this compute capability, in one line
     * naming the minimum, or empty when it can. A driver JIT-compiles PTX up to the ISA of its own CUDA version
     * (above it cuModuleLoadDataEx fails with CUDA_ERROR_UNSUPPORTED_PTX_VERSION). A device older than every
     * packaged target is named too.
     */
    public static Optional<String> driverTooOld(int driverVersion, int computeCapability) {
        return manifest().flatMap(m -> driverTooOld(m, driverVersion, computeCapability));
    }

    static Optional<String> driverTooOld(Manifest m, int driverVersion, int computeCapability) {
        String arch;
        try {
            arch = archFor(computeCapability, m.archs());
        } catch (CudaException e) {
            return Optional.of("CUDA unavailable: " + e.getMessage());
        }
        int ptx = m.cudaNeeded(arch), api = CudaVersions.DRIVER_API_FLOOR;
        if (driverVersion >= Math.max(ptx, api)) {
            return Optional.empty();
        }
        String gpu = "this GPU (compute capability " + computeCapability / 10 + "." + computeCapability % 10
                + ") runs the " + arch + " PTX (ISA " + m.isaOf(arch) + ")";
        return Optional.of(
                "CUDA unavailable: the NVIDIA driver supports CUDA " + CudaDriver.versionString(driverVersion) + "; "
                        + (ptx >= api
                                ? gpu + ", which needs " + CudaVersions.describeCuda(ptx)
                                : "goss-gpu's driver calls (CUDA graphs) need " + CudaVersions.describeCuda(api) + " ("
                                        + gpu + ", which loads from CUDA " + CudaDriver.versionString(ptx) + ")")
                        + ": update the NVIDIA driver");
    }

    /**
     * Which packaged PTX a driver of this version loads, e.g. "loads the PTX for sm_75 (ISA 6.3), sm_80 (ISA 7.0),
     * sm_90 (ISA 7.8)" or "loads the PTX for sm_75 (ISA 6.3); not for sm_80 (ISA 7.0 needs CUDA 11.0), ...".
     */
    public static String loadable(int driverVersion) {
        return manifest().map(m -> loadable(m, driverVersion)).orElse("no PTX packaged");
    }

    static String loadable(Manifest m, int driverVersion) {
        List<String> yes = new java.util.ArrayList<>(), no = new java.util.ArrayList<>();
        for (String arch : m.archs()) {
            int needed = m.cudaNeeded(arch);
            if (driverVersion >= needed) {
                yes.add(arch + " (ISA " + m.isaOf(arch) + ")");
            } else {
                no.add(arch + " (ISA " + m.isaOf(arch) + " needs CUDA " + CudaDriver.versionString(needed) + ")");
            }
        }
        return (yes.isEmpty() ? "loads none of the packaged PTX" : "loads the PTX for " + String.join(", ", yes))
                + (no.isEmpty() ? "" : "; not for " + String.join(", ", no));
    }

    /** "13.0" → 13000, the encoding of cuDriverGetVersion; 0 when unparseable. */
    static int releaseToVersion(String release) {
        String[] parts = release.split("\\.");
        try {
            return Integer.parseInt(parts[0]) * 1000 + (parts.length > 1 ? Integer.parseInt(parts[1]) * 10 : 0);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * The PTX target for a device: the highest packaged sm_XX not above its compute capability (PTX
     * is forward compatible: the driver JITs sm_90 PTX for sm_100 and sm_120).
     *
     * @param computeCapability e.g. 86 for 8.6
     */
    public static String archFor(int computeCapability, List<String> archs) {
        String best = null;
        for (String a : archs) {
            if (archNumber(a) <= computeCapability) {
                best = a;
            }
        }
        if (best == null) {
            throw new CudaException(
                    "CUDA device with compute capability " + computeCapability / 10 + "." + computeCapability % 10
                            + " is not supported: the kernels are built for " + String.join(", ", archs)
                            + " (compute capability " + archNumber(archs.get(0)) / 10 + "."
                            + archNumber(archs.get(0)) % 10 + " or newer)");
        }
        return best;
    }

    /** Class-path resource of one kernel for one target, e.g. io/gossgpu/kernels/cuda/rmsnorm.sm_90.ptx. */
    public static String resourceName(String kernel, String arch) {
        return RESOURCE_DIR + kernel + "." + arch + ".ptx";
    }

    /** The PTX text of a packaged kernel. */
    public static byte[] ptx(String kernel, String arch) {
        String name = resourceName(kernel, arch);
        try (InputStream in = loader().getResourceAsStream(name)) {
            if (in == null) {
                throw new CudaException(
                        manifest().isEmpty()
                                ? NOT_BUILT
                                : "CUDA kernel " + kernel + " for " + arch + " is not packaged (" + name
                                        + " missing from the class path)");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + name, e);
        }
    }

    static int archNumber(String arch) {
        try {
            return Integer.parseInt(arch.replaceFirst("^sm_", ""));
        } catch (NumberFormatException e) {
            return Integer.MAX_VALUE;
        }
    }

    private static List<String> split(String s) {
        return Arrays.stream(s.split(","))
                .map(String::strip)
                .filter(x -> !x.isEmpty())
                .toList();
    }

    private static ClassLoader loader() {
        ClassLoader cl = CudaKernels.class.getClassLoader();
        return cl != null ? cl : ClassLoader.getSystemClassLoader();
    }
}
