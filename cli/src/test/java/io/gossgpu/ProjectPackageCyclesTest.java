package io.gossgpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
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

    @Test
    void theProjectHasNoPackageCycle() throws IOException {
        Map<String, Set<String>> graph = new TreeMap<>();
        for (Path classes : moduleClasses())
            PackageCyclesTest.packageGraph(classes)
                    .forEach((p, uses) ->
                            graph.computeIfAbsent(p, k -> new TreeSet<>()).addAll(uses));
        assertTrue(graph.keySet().containsAll(REQUIRED), "packages read: " + graph.keySet());
        List<Set<String>> cycles = PackageCyclesTest.cycles(graph);
        assertTrue(cycles.isEmpty(), "package cycles across modules: " + cycles);
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
