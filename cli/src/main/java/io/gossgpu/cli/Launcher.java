package io.gossgpu.cli;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * Entry point of goss-gpu.jar. The Vector API is an incubator module that a JVM only resolves when
 * asked on its command line, and no jar manifest attribute can ask. So when it is missing, the
 * launcher starts the same java once more with the flags goss-gpu needs, passes through the user's
 * JVM options and arguments, and returns the child's exit code. {@code GOSS_NO_RELAUNCH=1} turns
 * this off (the cpu backend then falls back to scalar code).
 *
 * <p>This class alone is compiled for Java 11, so that an older {@code java} gets a clear message.
 */
public final class Launcher {
    static final String RELAUNCHED = "goss.relaunched";

    private Launcher() {}

    static final int MIN_JAVA = 22;

    public static void main(String[] args) throws Exception {
        if (Runtime.version().feature() < MIN_JAVA) {
            System.err.println("goss-gpu: needs Java " + MIN_JAVA + " or newer, and this is Java " + Runtime.version().feature()
                    + " (" + System.getProperty("java.home") + "). Install a newer JDK (for example Temurin 25) or use ./gossw run.");
            System.exit(1);
        }
        if (needsRelaunch()) System.exit(relaunch(Arguments.asUtf8(args)));
        System.exit(Main.runProcess(args));
    }

    private static boolean needsRelaunch() {
        return ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()
                && System.getProperty(RELAUNCHED) == null
                && !"1".equals(System.getenv("GOSS_NO_RELAUNCH"));
    }

    /**
     * Native libraries that install their own SIGSEGV handlers (PoCL loads LLVM, which does) replace the
     * JVM's, and the JVM relies on SIGSEGV for null checks and safepoints: the process then dies now and then
     * with no hs_err file. The JDK's libjsig chains such handlers behind the JVM's; it must be preloaded.
     */
    private static void chainSignals(ProcessBuilder pb) {
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) return;
        File jsig = new File(System.getProperty("java.home"), "lib/libjsig.so");
        if (!jsig.isFile()) return;
        String preload = pb.environment().get("LD_PRELOAD");
        if (preload != null && preload.contains("libjsig")) return;
        pb.environment().put("LD_PRELOAD", preload == null || preload.isBlank() ? jsig.getPath() : jsig.getPath() + ":" + preload);
    }

    private static int relaunch(String[] args) throws Exception {
        String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
        String jar = new File(Launcher.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getPath();
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.add("--add-modules=jdk.incubator.vector");
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-D" + RELAUNCHED + "=true");
        // LWJGL still uses sun.misc.Unsafe; JDK 23+ warns about it on every start unless told this is known.
        if (Runtime.version().feature() >= 23) cmd.add("--sun-misc-unsafe-memory-access=allow");
        // Keep the user's own JVM options (-Xmx, -D...), except agent hooks that must not run twice.
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments())
            if (!a.startsWith("-agentlib:jdwp") && !a.startsWith("-javaagent")) cmd.add(a);
        cmd.add("-cp");
        cmd.add(jar);
        cmd.add(Launcher.class.getName());
        cmd.addAll(List.of(args));
        // Ctrl-C reaches the child (same process group); this parent only waits for it.
        try {
            sun.misc.Signal.handle(new sun.misc.Signal("INT"), signal -> { });
        } catch (IllegalArgumentException unsupported) {
            // no SIGINT on this platform
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).inheritIO();
        if (Arguments.needsPassing(args)) pb.environment().put(Arguments.ENV, Arguments.encode(args));
        chainSignals(pb);
        Process p = pb.start();
        return p.waitFor();
    }
}
