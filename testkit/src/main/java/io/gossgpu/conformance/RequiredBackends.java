package io.gossgpu.conformance;

import static org.junit.jupiter.api.Assertions.fail;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Backends;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;

/**
 * Whether the tests of an unavailable backend are skipped or fail. A test machine without the device skips them,
 * with the reason; where the device or its stand-in is installed on purpose (CI: PoCL, the emulated Metal device, the
 * fake CUDA driver), {@code GOSS_REQUIRE_<NAME>=1} ({@code GOSS_REQUIRE_OPENCL}, {@code GOSS_REQUIRE_METAL},
 * {@code GOSS_REQUIRE_CUDA}) turns the absence into a failure, so that a driver or emulator that fails to load cannot
 * leave the run green with every device test skipped. The environment is read once, here.
 */
public final class RequiredBackends {
    private static final Map<String, String> ENVIRONMENT = System.getenv();

    private RequiredBackends() {}

    /** The switch of {@code backend}: {@code GOSS_REQUIRE_CUDA} for {@code cuda}. */
    public static String variable(String backend) {
        return "GOSS_REQUIRE_" + backend.toUpperCase(Locale.ROOT);
    }

    /** Whether this run requires {@code backend} ({@code GOSS_REQUIRE_<NAME>=1}). */
    public static boolean required(String backend) {
        return required(backend, ENVIRONMENT);
    }

    static boolean required(String backend, Map<String, String> env) {
        return "1".equals(env.get(variable(backend)));
    }

    /** Returns when {@code p} is available; otherwise skips the calling test with the reason, or fails it when required. */
    public static void requireAvailable(BackendProvider p) {
        requireAvailable(p.name(), Backends.safeAvailability(p), ENVIRONMENT);
    }

    /** As {@link #requireAvailable(BackendProvider)} for an availability already probed. */
    public static void requireAvailable(String backend, Availability a) {
        requireAvailable(backend, a, ENVIRONMENT);
    }

    static void requireAvailable(String backend, Availability a, Map<String, String> env) {
        if (a.available()) return;
        if (required(backend, env))
            fail(variable(backend) + "=1 but backend '" + backend + "' is unavailable: " + a.reason());
        Assumptions.assumeTrue(false, () -> "backend '" + backend + "' unavailable: " + a.reason());
    }
}
