package io.gossgpu.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/**
 * The PTX the kernels module packages: {@code io/gossgpu/kernels/cuda/NAME.sm_XX.ptx} and the
 * {@code kernels.properties} that the build writes next to them (see kernels/tools/PtxBuild.java).
 */
public final class CudaKernels {

    /** Class-path folder of the PTX resources. */
    public static final String RESOURCE_DIR = "io/gossgpu/kernels/cuda/";
    public static final String MANIFEST = RESOURCE_DIR + "kernels.properties";
    /** Reason given when the build had no nvcc and no prebuilt PTX. */
    public static final String NOT_BUILT = "CUDA unavailable: CUDA kernels were not built "
            + "(nvcc was not found when goss-gpu was built; see kernels/cuda/README.md)";

    private CudaKernels() {
    }

    /**
     * What was built.
     *
     * @param source      "nvcc" or "prebuilt"
     * @param cudaRelease the CUDA release that compiled the PTX, e.g. "13.0" (the driver must support it)
     * @param kernels     kernel file names without extension, e.g. [add, rmsnorm]
     * @param archs       e.g. [sm_80, sm_90], ascending
     */
    public record Manifest(String source, String cudaRelease, List<String> kernels, List<String> archs) {
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
                    .sorted((a, b) -> Integer.compare(archNumber(a), archNumber(b))).toList();
            return Optional.of(new Manifest(p.getProperty("source", "?"), p.getProperty("cuda.release", "?"),
                    split(p.getProperty("kernels", "")), archs));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + MANIFEST, e);
        }
    }

    /** Why the kernels cannot be used, or empty when they are packaged. */
    public static Optional<String> unavailableReason() {
        return manifest().isPresent() ? Optional.empty() : Optional.of(NOT_BUILT);
    }

    /**
     * Why a driver of this version cannot JIT the packaged PTX, or empty when it can. PTX written by
     * CUDA X.Y needs a driver that supports at least CUDA X.Y (otherwise cuModuleLoadDataEx fails with
     * CUDA_ERROR_UNSUPPORTED_PTX_VERSION).
     */
    public static Optional<String> driverTooOld(int driverVersion) {
        Optional<Manifest> m = manifest();
        if (m.isEmpty()) {
            return Optional.empty();
        }
        int needed = releaseToVersion(m.get().cudaRelease());
        if (needed <= 0 || driverVersion >= needed) {
            return Optional.empty();
        }
        return Optional.of("CUDA unavailable: the NVIDIA driver supports CUDA " + CudaDriver.versionString(driverVersion)
                + " but the kernels were built with CUDA " + m.get().cudaRelease()
                + "; update the driver or build goss-gpu with an older nvcc");
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
            throw new CudaException("CUDA device with compute capability " + computeCapability / 10 + "." + computeCapability % 10
                    + " is not supported: the kernels are built for " + String.join(", ", archs)
                    + " (compute capability " + archNumber(archs.get(0)) / 10 + "." + archNumber(archs.get(0)) % 10 + " or newer)");
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
                throw new CudaException(manifest().isEmpty() ? NOT_BUILT
                        : "CUDA kernel " + kernel + " for " + arch + " is not packaged (" + name + " missing from the class path)");
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
        return Arrays.stream(s.split(",")).map(String::strip).filter(x -> !x.isEmpty()).toList();
    }

    private static ClassLoader loader() {
        ClassLoader cl = CudaKernels.class.getClassLoader();
        return cl != null ? cl : ClassLoader.getSystemClassLoader();
    }
}
