package io.gossgpu.cpu.matmul;

import io.gossgpu.cpu.bindings.goss_cpu_h;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Finds libgoss_cpu (built from {@code backend-cpu/kernels} by the kernels module into
 * {@code io/gossgpu/kernels/cpu/<os>-<arch>/}), binds it once per JVM, and says which instruction sets this
 * CPU can run. When there is no library for this platform, native access is denied, or the CPU lacks AVX2,
 * {@link #unavailableReason()} says why in one line and the cpu backend runs its Java kernels.
 */
public final class NativeCpu {
    private NativeCpu() {}

    private static final String RESOURCE = "/io/gossgpu/kernels/cpu/%s/libgoss_cpu.so";
    private static volatile boolean probed;
    private static String reason;
    private static int features;

    /** The platform directory name, e.g. {@code linux-x86_64}, or null where no library is built. */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (os.contains("linux") && (arch.equals("amd64") || arch.equals("x86_64"))) return "linux-x86_64";
        return null;
    }

    private static synchronized void probe() {
        if (probed) return;
        try {
            String platform = platform();
            if (platform == null) {
                reason = "no native cpu kernels are built for " + System.getProperty("os.name") + " "
                        + System.getProperty("os.arch");
                return;
            }
            URL url = NativeCpu.class.getResource(String.format(RESOURCE, platform));
            if (url == null) {
                reason = "libgoss_cpu.so is not in this build (the kernels module builds it with gcc on Linux x86-64)";
                return;
            }
            Path copy = url.getProtocol().equals("file") ? null : copyOut(url);
            goss_cpu_h.Library.path = copy != null ? copy : Path.of(url.toURI());
            try {
                features = goss_cpu_h.goss_cpu_features(); // binds every symbol: the library is mapped from here on
            } finally {
                if (copy != null) Files.deleteIfExists(copy);
            }
            if ((features & goss_cpu_h.GOSS_CPU_AVX2) == 0) reason = "this CPU has no AVX2 and FMA";
        } catch (IllegalCallerException e) {
            reason = "native access is not enabled (run java with --enable-native-access=ALL-UNNAMED)";
        } catch (ExceptionInInitializerError e) {
            reason = "libgoss_cpu could not be loaded: " + e.getCause();
        } catch (IOException | URISyntaxException | RuntimeException | LinkageError e) {
            reason = "libgoss_cpu could not be loaded: " + e;
        } finally {
            probed = true;
        }
    }

    /**
     * The library inside a jar, copied to a temporary file for the loader. The caller deletes the file as soon as the
     * library is bound (a mapped library needs no name), so that it does not outlive a process that crashes;
     * {@code deleteOnExit} covers only the moment between the copy and the load.
     */
    private static Path copyOut(URL url) throws IOException {
        Path tmp = Files.createTempFile("goss-cpu-", ".so");
        tmp.toFile().deleteOnExit();
        try (InputStream in = url.openStream()) {
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
        }
        return tmp;
    }

    /** Null when the native kernels can run here, else why not (one line). */
    public static String unavailableReason() {
        probe();
        return reason;
    }

    /** Whether this CPU can run the kernels of {@code isa} (JAVA always). */
    public static boolean supports(KernelSet.Isa isa) {
        if (isa == KernelSet.Isa.JAVA) return true;
        probe();
        if (reason != null) return false;
        int bit = switch (isa) {
            case AVX512 -> goss_cpu_h.GOSS_CPU_AVX512;
            case AVXVNNI -> goss_cpu_h.GOSS_CPU_AVXVNNI;
            default -> goss_cpu_h.GOSS_CPU_AVX2;
        };
        return (features & bit) != 0;
    }

    /** The fastest kernel set this machine runs. */
    public static KernelSet.Isa best() {
        if (supports(KernelSet.Isa.AVX512)) return KernelSet.Isa.AVX512;
        if (supports(KernelSet.Isa.AVXVNNI)) return KernelSet.Isa.AVXVNNI;
        if (supports(KernelSet.Isa.AVX2)) return KernelSet.Isa.AVX2;
        return KernelSet.Isa.JAVA;
    }
}
