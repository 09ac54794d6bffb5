package io.gossgpu.metal;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import java.util.Locale;

/**
 * The {@code metal} backend (priority 100). On macOS it loads the Objective-C shim ({@code libgoss_metal.dylib});
 * anywhere, with {@code GOSS_METAL_EMULATOR=1} or {@code -Dgoss.metal.emulator=true}, the emulated Metal device
 * ({@code libgoss_metal_emu.so}, built on Linux by the metal-emu module and named by {@code GOSS_METAL_LIBRARY}) that
 * runs the same kernels on the CPU — for tests, not for use. {@code GOSS_METAL_LIBRARY} / {@code goss.metal.library}
 * names the native library explicitly.
 */
public final class MetalBackendProvider implements BackendProvider {
    public static final String NAME = "metal";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int priority() {
        return 100;
    }

    /** True when the emulated device was asked for (system property {@code goss.metal.emulator} or env {@code GOSS_METAL_EMULATOR}). */
    public static boolean emulatorRequested() {
        String v = MetalNative.setting("goss.metal.emulator", "GOSS_METAL_EMULATOR");
        return v != null && (v.equals("1") || v.equalsIgnoreCase("true") || v.equalsIgnoreCase("yes"));
    }

    @Override
    public Availability availability() {
        return availability(emulatorRequested(), System.getProperty("os.name", ""));
    }

    static Availability availability(boolean emu, String osName) {
        if (!emu && !osName.toLowerCase(Locale.ROOT).contains("mac"))
            return Availability.no("not macOS (the emulated device is for tests: set GOSS_METAL_EMULATOR=1)");
        try {
            return Availability.yes(MetalNative.probe(emu));
        } catch (RuntimeException | LinkageError e) {
            return Availability.no(e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }

    @Override
    public Backend create(BackendOptions options) {
        return new MetalBackend(emulatorRequested(), options);
    }

    @Override
    public java.util.List<io.gossgpu.backend.Knob> knobs() {
        return MetalKnobs.ALL;
    }

    @Override
    public java.util.List<String> settingNames() {
        return java.util.List.of(MetalKnobs.NO_COPY.envName(), "GOSS_METAL_LIBRARY", "GOSS_METAL_EMULATOR");
    }
}
