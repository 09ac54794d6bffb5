package io.gossgpu.cli;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.SettingNames;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SortedSet;

/**
 * Warns once about {@code GOSS_*} variables and {@code goss.*} properties nothing reads, with the nearest known name
 * ({@link SettingNames}): the backends' knobs and settings, the command line's own, and those of the build scripts,
 * tests and GPU emulators (set in the same shells).
 */
final class KnownSettings {
    private KnownSettings() {}

    /** Read by the command line itself. */
    static final List<String> COMMAND_LINE = List.of(
            "GOSS_MODEL",
            "GOSS_BACKEND",
            "GOSS_DEBUG",
            "GOSS_NO_RELAUNCH",
            "GOSS_API_KEY",
            Arguments.ENV,
            BackendOptions.envName(Launcher.RELAUNCHED),
            BackendOptions.envName(Launcher.HELD_STDERR));
    /** Read by scripts/find-jdk.sh, scripts/setup-pocl.sh, the tests and the emulated GPUs (backend-{cuda,metal}/emu). */
    static final List<String> TOOLS = List.of(
            "GOSS_JAVA_HOME",
            "GOSS_SKIP_POCL",
            "GOSS_REQUIRE_OPENCL",
            "GOSS_REQUIRE_METAL",
            "GOSS_REQUIRE_CUDA",
            "GOSS_EMU_ORDER",
            "GOSS_EMU_POISON",
            "GOSS_EMU_THREADS");

    static SortedSet<String> all() {
        SortedSet<String> known = SettingNames.known();
        known.addAll(COMMAND_LINE);
        known.addAll(TOOLS);
        return known;
    }

    /** One warning per unknown name in {@code env} and {@code properties} (once per process; see {@link LibraryMessages}). */
    static void warnUnknown(Map<String, String> env, Properties properties) {
        var names = SettingNames.inEnvironment(env, properties);
        if (!names.isEmpty()) SettingNames.warnOnce(SettingNames.unknown(names, all()));
    }
}
