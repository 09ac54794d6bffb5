package io.gossgpu.cpu;

import io.gossgpu.GossException;
import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendProvider;

import java.util.Locale;

/**
 * The {@code cpu} backend: Vector API kernels on a persistent pool of threads. Priority 10 (above
 * {@code reference}, below GPU backends). Always available: without the jdk.incubator.vector module it
 * runs scalar kernels and says so in its description.
 *
 * <p>Threads: system property {@value #THREADS_PROPERTY} (the CLI's {@code --threads} sets it), else the
 * environment variable {@value #THREADS_ENV}, else every available processor.
 */
public final class CpuBackendProvider implements BackendProvider {
    public static final String NAME = "cpu";
    public static final String THREADS_PROPERTY = "goss.cpu.threads";
    public static final String THREADS_ENV = "GOSS_CPU_THREADS";
    /** The most threads accepted. */
    public static final int MAX_THREADS = 1024;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int priority() {
        return 10;
    }

    @Override
    public Availability availability() {
        return Availability.yes(CpuKernels.vectorApiPresent()
                ? "Java Vector API, " + Runtime.getRuntime().availableProcessors() + " CPUs"
                : "scalar fallback: jdk.incubator.vector is not in the boot layer (add --add-modules jdk.incubator.vector)");
    }

    @Override
    public Backend create() {
        return new CpuBackend(threads(), CpuKernels.best());
    }

    /** The configured thread count; a GossException naming the knob, the value and the range when invalid. */
    public static int threads() {
        String prop = System.getProperty(THREADS_PROPERTY);
        if (prop != null && !prop.isBlank()) return parse(THREADS_PROPERTY + " (system property)", prop);
        String env = System.getenv(THREADS_ENV);
        if (env != null && !env.isBlank()) return parse(THREADS_ENV + " (environment)", env);
        return Runtime.getRuntime().availableProcessors();
    }

    static int parse(String knob, String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 1 || n > MAX_THREADS)
            throw new GossException(knob + " = '" + value + "' is invalid; allowed: an integer from 1 to " + MAX_THREADS);
        return n;
    }
}
