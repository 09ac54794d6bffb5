package io.gossgpu.cli;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What the relaunched JVM writes on stderr before {@code main} (the "WARNING: Using incubator modules" line, which no
 * JVM option turns off), held back for {@code serve --log-format json}, where every stderr line must be a JSON object.
 * Before {@code execve} the launcher points stderr at a file and keeps the real stderr open on another descriptor,
 * whose number and the file's path travel in {@value #PROPERTY}; the relaunched JVM puts stderr back first thing
 * ({@link #restore}) and the serve command logs the held lines in its format ({@link #take}).
 */
public final class HeldStderr {
    static final String PROPERTY = "goss.held.stderr";
    private static final int STDERR = 2, O_WRONLY = 1;
    private static List<String> held = List.of();

    private HeldStderr() {}

    /**
     * Points stderr at a new file and returns the JVM option that tells the relaunched JVM where the real stderr is;
     * null (stderr untouched) where that cannot be done. {@link #undo} reverses it if the exec then fails.
     */
    static String hold() {
        try {
            Path file = Files.createTempFile("goss-jvm-start", ".txt");
            int saved = call("dup", STDERR);
            if (saved < 0) return null;
            int fd;
            try (Arena arena = Arena.ofConfined()) {
                fd = (int) OPEN.invokeExact(arena.allocateFrom(file.toString()), O_WRONLY);
            }
            if (fd < 0 || call2("dup2", fd, STDERR) < 0) {
                call("close", saved);
                Files.deleteIfExists(file);
                return null;
            }
            call("close", fd);
            return "-D" + PROPERTY + "=" + saved + ":" + file;
        } catch (Throwable t) {
            return null;
        }
    }

    /** The exec did not happen: stderr back as it was. */
    static void undo(String option) {
        restore(option.substring(option.indexOf('=') + 1));
        held.forEach(System.err::println);
        held = List.of();
    }

    /** In the relaunched JVM, before anything else: stderr back to the real one, the lines written meanwhile kept. */
    public static void restore() {
        String value = System.getProperty(PROPERTY);
        if (value != null) restore(value);
    }

    private static void restore(String value) {
        int colon = value.indexOf(':');
        try {
            int saved = Integer.parseInt(value.substring(0, colon));
            Path file = Path.of(value.substring(colon + 1));
            System.err.flush();
            if (call2("dup2", saved, STDERR) >= 0) call("close", saved);
            List<String> lines = new ArrayList<>(Files.readAllLines(file, StandardCharsets.UTF_8));
            Files.deleteIfExists(file);
            lines.removeIf(String::isBlank);
            held = List.copyOf(lines);
        } catch (Throwable t) {
            // nothing held: what the JVM wrote before main is lost, the rest of stderr is not
        }
    }

    /** The lines the JVM wrote on stderr before main, once (then empty). */
    static synchronized List<String> take() {
        List<String> out = held;
        held = List.of();
        return out;
    }

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle OPEN = LINKER.downcallHandle(
            LINKER.defaultLookup().find("open").orElseThrow(),
            FunctionDescriptor.of(
                    ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT)); // no mode: the file exists

    private static int call(String name, int a) throws Throwable {
        MethodHandle h = LINKER.downcallHandle(
                LINKER.defaultLookup().find(name).orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        return (int) h.invokeExact(a);
    }

    private static int call2(String name, int a, int b) throws Throwable {
        MethodHandle h = LINKER.downcallHandle(
                LINKER.defaultLookup().find(name).orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        return (int) h.invokeExact(a, b);
    }
}
