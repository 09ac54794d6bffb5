package io.gossgpu.cli;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Entry point of goss-gpu.jar. The Vector API is an incubator module that a JVM only resolves when
 * asked on its command line, and no jar manifest attribute can ask. So when it is missing, the
 * launcher runs the same java once more with the flags goss-gpu needs and the user's JVM options and
 * arguments, in place of itself ({@code execve}: same process id, so a supervisor's SIGTERM or SIGINT
 * reaches the real program and its exit status is the program's). Where that is impossible (Windows)
 * it starts a child, forwards SIGTERM to it, and returns the child's exit code.
 * {@code GOSS_NO_RELAUNCH=1} turns this off (the cpu backend then falls back to scalar code).
 *
 * <p>This class alone is compiled for Java 11, so that an older {@code java} gets a clear message.
 */
public final class Launcher {
    static final String RELAUNCHED = "goss.relaunched";
    /** HeldStderr.PROPERTY (that class is Java 22). */
    static final String HELD_STDERR = "goss.held.stderr";

    private Launcher() {}

    static final int MIN_JAVA = 22;

    public static void main(String[] args) throws Exception {
        if (Runtime.version().feature() < MIN_JAVA) {
            System.err.println("goss-gpu: needs Java " + MIN_JAVA + " or newer, and this is Java "
                    + Runtime.version().feature() + " (" + System.getProperty("java.home")
                    + "). Install a newer JDK (for example Temurin 25) or use ./gossw run.");
            System.exit(1);
        }
        if (System.getProperty(HELD_STDERR) != null)
            call("io.gossgpu.cli.HeldStderr", "restore"); // before anything is written
        if (needsRelaunch() && !onlyPrintsText(args)) System.exit(relaunch(Arguments.asUtf8(args)));
        System.exit(Main.runProcess(args));
    }

    private static boolean needsRelaunch() {
        return ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()
                && System.getProperty(RELAUNCHED) == null
                && !"1".equals(System.getenv("GOSS_NO_RELAUNCH"));
    }

    /**
     * {@code -V}, {@code help [COMMAND]} and {@code [COMMAND] --help} print text and load no model: they need no Vector
     * API, and a relaunch with {@code --add-modules} would only add the JDK's "Using incubator modules" warning.
     */
    static boolean onlyPrintsText(String[] args) {
        if (args.length == 0) return false;
        if (args[0].equals("help")) return args.length <= 2;
        String last = args[args.length - 1];
        boolean flag = last.equals("-V") || last.equals("--version") || last.equals("-h") || last.equals("--help");
        return flag && (args.length == 1 || (args.length == 2 && !args[0].startsWith("-")));
    }

    /**
     * Native libraries that install their own SIGSEGV handlers (PoCL loads LLVM, which does) replace the
     * JVM's, and the JVM relies on SIGSEGV for null checks and safepoints: the process then dies now and then
     * with no hs_err file. The JDK's libjsig chains such handlers behind the JVM's; it must be preloaded.
     */
    private static void chainSignals(Map<String, String> env) {
        if (!System.getProperty("os.name", "")
                .toLowerCase(java.util.Locale.ROOT)
                .contains("linux")) return;
        File jsig = new File(System.getProperty("java.home"), "lib/libjsig.so");
        if (!jsig.isFile()) return;
        String preload = env.get("LD_PRELOAD");
        if (preload != null && preload.contains("libjsig")) return;
        env.put("LD_PRELOAD", preload == null || preload.isBlank() ? jsig.getPath() : jsig.getPath() + ":" + preload);
    }

    private static int relaunch(String[] args) throws Exception {
        String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
        String jar = new File(Launcher.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toURI())
                .getPath();
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
        Map<String, String> env = new HashMap<>(System.getenv());
        if (Arguments.needsPassing(args)) env.put(Arguments.ENV, Arguments.encode(args));
        chainSignals(env);
        String whyNot =
                exec(cmd, env, holdsStderr(args)); // returns only if this process could not become the relaunched JVM
        if (System.getenv("GOSS_DEBUG") != null)
            System.err.println("goss-gpu: relaunching as a child process: " + whyNot);
        return runChild(cmd, env);
    }

    /** {@link ProcessExec#exec}, reached through reflection: it is Java 22 code and this class is Java 11. */
    private static String exec(List<String> cmd, Map<String, String> env, boolean holdStderr) {
        try {
            return (String) Class.forName("io.gossgpu.cli.ProcessExec")
                    .getMethod("exec", List.class, Map.class, boolean.class)
                    .invoke(null, cmd, env, holdStderr);
        } catch (ReflectiveOperationException | LinkageError e) {
            return e.toString();
        }
    }

    /**
     * {@code serve --log-format json}: every stderr line must be JSON, and the JVM's own "Using incubator modules"
     * warning is not, so the relaunched JVM's stderr before main is held for the server to log (HeldStderr).
     */
    private static boolean holdsStderr(String[] args) {
        boolean serve = false, json = false;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("serve")) serve = true;
            if (args[i].equals("--log-format=json")
                    || (args[i].equals("--log-format")
                            && i + 1 < args.length
                            && args[i + 1].trim().equalsIgnoreCase("json"))) json = true;
        }
        return serve && json;
    }

    /** A static no-argument method of a Java 22 class, through reflection; a failure is ignored. */
    private static void call(String className, String method) {
        try {
            Class.forName(className).getMethod(method).invoke(null);
        } catch (ReflectiveOperationException | LinkageError e) {
            // the class cannot run here: nothing was held
        }
    }

    /**
     * The fallback: the relaunched JVM as a child. Ctrl-C at a terminal reaches it directly (same process group),
     * so this parent ignores SIGINT; SIGTERM, which a supervisor sends to this process only, is passed on.
     */
    private static int runChild(List<String> cmd, Map<String, String> env) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(cmd).inheritIO();
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        onSignal("INT", () -> {});
        onSignal("TERM", p::destroy); // SIGTERM to the child; waitFor below returns its status
        return p.waitFor();
    }

    private static void onSignal(String name, Runnable action) {
        try {
            sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> action.run());
        } catch (IllegalArgumentException unsupported) {
            // no such signal on this platform
        }
    }
}
