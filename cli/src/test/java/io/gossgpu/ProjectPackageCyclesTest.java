package io.gossgpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No two packages of the whole project depend on each other, directly or through others, across modules too: the
 * package graph jdeps reads from every module's compiled classes has no cycle. Runs in cli, the module built last.
 */
class ProjectPackageCyclesTest {
    /** The modules whose classes the check must see, so a module that moved or did not build fails it. */
    private static final Set<String> REQUIRED = Set.of(
            "io.gossgpu.api",
            "io.gossgpu.cpu",
            "io.gossgpu.device",
            "io.gossgpu.cuda",
            "io.gossgpu.opencl",
            "io.gossgpu.metal",
            "io.gossgpu.tools",
            "io.gossgpu.testmodel",
            "io.gossgpu.server",
            "io.gossgpu.cli");

    private static final Pattern EDGE =
            Pattern.compile("^\\s+(io\\.gossgpu[\\w.]*)\\s+->\\s+(io\\.gossgpu[\\w.]*)\\s", Pattern.MULTILINE);

    @Test
    void theProjectHasNoPackageCycle() throws IOException {
        Map<String, Set<String>> graph = new TreeMap<>();
        for (Path classes : moduleClasses()) packageGraph(classes, graph);
        assertTrue(graph.keySet().containsAll(REQUIRED), "packages read: " + graph.keySet());
        List<Set<String>> cycles = PackageCyclesTest.cycles(graph);
        assertTrue(cycles.isEmpty(), "package cycles across modules: " + cycles);
    }

    /**
     * Adds the io.gossgpu package edges jdeps reads from one module's classes. Each module is read on its own; the
     * named modules find what they require on a module path of the project's own named modules and the third-party
     * jars they require (a module path of every jar would hold the split packages of the class-path-only testkit).
     */
    private static void packageGraph(Path classes, Map<String, Set<String>> graph) {
        ToolProvider jdeps =
                ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("this JDK has no jdeps"));
        StringWriter out = new StringWriter(), err = new StringWriter();
        int rc = jdeps.run(
                new PrintWriter(out),
                new PrintWriter(err),
                "--multi-release",
                Integer.toString(Runtime.version().feature()),
                "--module-path",
                modulePath(),
                "--ignore-missing-deps",
                "-verbose:package",
                "-filter:none",
                classes.toString());
        assertEquals(0, rc, classes + ": " + err + out);
        Matcher m = EDGE.matcher(out.toString());
        while (m.find()) {
            Set<String> uses = graph.computeIfAbsent(m.group(1), k -> new TreeSet<>());
            if (!m.group(1).equals(m.group(2))) uses.add(m.group(2));
        }
    }

    /** engine-core's and gpu-device's classes, and the jars the named modules require (not LWJGL's natives). */
    private static String modulePath() {
        List<String> path = new ArrayList<>(List.of(
                Path.of("../engine-core/target/classes").toString(),
                Path.of("../gpu-device/target/classes").toString()));
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator))
            if (Path.of(e)
                    .getFileName()
                    .toString()
                    .matches("(jackson-(core|databind|annotations)|jtokkit|lwjgl(-opencl)?)-[0-9.]+\\.jar"))
                path.add(e);
        return String.join(File.pathSeparator, path);
    }

    /** target/classes of every module of the repository (cli runs in cli/, one level below the root). */
    private static List<Path> moduleClasses() throws IOException {
        try (Stream<Path> dirs = Files.walk(Path.of(".."), 3)) {
            return dirs.filter(
                            d -> d.endsWith(Path.of("target", "classes")) && Files.isDirectory(d.resolve("io/gossgpu")))
                    .map(Path::normalize)
                    .sorted()
                    .toList();
        }
    }
}
