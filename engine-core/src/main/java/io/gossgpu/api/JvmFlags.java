package io.gossgpu.api;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The JVM flags goss-gpu runs best with, checked once per process by {@link Engine#open}: without
 * {@code --add-modules jdk.incubator.vector} the cpu backend falls back to scalar code (several times slower),
 * and without {@code --enable-native-access=ALL-UNNAMED} the JDK warns at (and will one day refuse) the native
 * calls of the GPU backends and LWJGL ({@link #NATIVE_MODULES} instead of ALL-UNNAMED on the module path, where
 * {@code requires jdk.incubator.vector} adds the first). goss-gpu.jar's launcher adds both; a library user must.
 */
final class JvmFlags {
    private static final AtomicBoolean WARNED = new AtomicBoolean();
    /** On the module path: the modules that make native calls (FFM, or LWJGL's JNI for OpenCL). */
    static final String NATIVE_MODULES = "io.gossgpu.core,io.gossgpu.cuda,io.gossgpu.opencl,io.gossgpu.metal,org.lwjgl";

    private JvmFlags() {}

    /** The flags this JVM lacks, each with what it costs; empty when it has them all. */
    static List<String> missing() {
        List<String> out = new ArrayList<>();
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty())
            out.add("--add-modules jdk.incubator.vector (else the cpu backend runs scalar code, several times slower)");
        if (!JvmFlags.class.getModule().isNativeAccessEnabled())
            out.add("--enable-native-access=" + (JvmFlags.class.getModule().isNamed() ? NATIVE_MODULES : "ALL-UNNAMED")
                    + " (else the JDK warns at the GPU backends' native calls)");
        return out;
    }

    /** One warning on {@link EngineLog}, the first time only, when flags are missing. */
    static void warnOnceIfMissing() {
        List<String> missing = missing();
        if (!missing.isEmpty() && WARNED.compareAndSet(false, true))
            EngineLog.LOG.log(System.Logger.Level.WARNING, "start java with " + String.join(" and ", missing));
    }
}
