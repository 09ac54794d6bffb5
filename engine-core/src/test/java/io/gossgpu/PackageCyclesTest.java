package io.gossgpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * No two packages of engine-core depend on each other, directly or through others: the package graph that the JDK's
 * {@code jdeps} reads from the compiled classes has no cycle (each strongly connected component is one package).
 */
class PackageCyclesTest {
    private static final Path CLASSES = Path.of("target", "classes");
    private static final Pattern EDGE =
            Pattern.compile("^\\s+(io\\.gossgpu[\\w.]*)\\s+->\\s+(io\\.gossgpu[\\w.]*)\\s", Pattern.MULTILINE);

    /** Package → the io.gossgpu packages its classes use, as {@code jdeps -verbose:package} reports them. */
    static Map<String, Set<String>> packageGraph(Path classes) {
        ToolProvider jdeps =
                ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("this JDK has no jdeps"));
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        // The classes are a named module (module-info): jdeps resolves its requires from the module path, here the
        // test's
        // class-path jars (jtokkit, Jackson), reading multi-release jars as this JDK does.
        String modulePath = java.util.Arrays.stream(
                        System.getProperty("java.class.path").split(java.io.File.pathSeparator))
                .filter(p -> p.endsWith(".jar"))
                .collect(java.util.stream.Collectors.joining(java.io.File.pathSeparator));
        int rc = jdeps.run(
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                "--multi-release",
                Integer.toString(Runtime.version().feature()),
                "--module-path",
                modulePath,
                "-verbose:package",
                "-filter:none",
                classes.toString());
        assertEquals(0, rc, err.toString(StandardCharsets.UTF_8) + out.toString(StandardCharsets.UTF_8));
        Map<String, Set<String>> graph = new TreeMap<>();
        Matcher m = EDGE.matcher(out.toString(StandardCharsets.UTF_8));
        while (m.find()) {
            graph.computeIfAbsent(m.group(1), k -> new TreeSet<>());
            if (!m.group(1).equals(m.group(2))) graph.get(m.group(1)).add(m.group(2));
        }
        return graph;
    }

    /** The strongly connected components of more than one package (Tarjan's algorithm), each sorted. */
    static List<Set<String>> cycles(Map<String, Set<String>> graph) {
        Map<String, Integer> index = new HashMap<>(), low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        List<Set<String>> out = new ArrayList<>();
        for (String v : graph.keySet()) if (!index.containsKey(v)) connect(v, graph, index, low, stack, out);
        return out;
    }

    private static void connect(
            String v,
            Map<String, Set<String>> graph,
            Map<String, Integer> index,
            Map<String, Integer> low,
            Deque<String> stack,
            List<Set<String>> out) {
        index.put(v, index.size());
        low.put(v, index.get(v));
        stack.push(v);
        for (String w : graph.getOrDefault(v, Set.of())) {
            if (!index.containsKey(w)) {
                connect(w, graph, index, low, stack, out);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (stack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            Set<String> component = new TreeSet<>();
            String w;
            do {
                w = stack.pop();
                component.add(w);
            } while (!w.equals(v));
            if (component.size() > 1) out.add(component);
        }
    }

    @Test
    void engineCoreHasNoPackageCycle() {
        assertTrue(Files.isDirectory(CLASSES), "run from engine-core after compiling: " + CLASSES.toAbsolutePath());
        Map<String, Set<String>> graph = packageGraph(CLASSES);
        assertTrue(
                graph.containsKey("io.gossgpu.model") && graph.containsKey("io.gossgpu.api"),
                graph.keySet().toString());
        List<Set<String>> cycles = cycles(graph);
        StringBuilder why = new StringBuilder();
        for (Set<String> c : cycles)
            for (String a : c)
                for (String b : graph.get(a))
                    if (c.contains(b))
                        why.append("\n  ").append(a).append(" -> ").append(b);
        assertTrue(cycles.isEmpty(), "package cycles " + cycles + ":" + why);
    }

    @Test
    void findsACycle() {
        Map<String, Set<String>> g = Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a", "d"), "d", Set.of());
        assertEquals(List.of(Set.of("a", "b", "c")), cycles(g));
        assertEquals(List.of(), cycles(Map.of("a", Set.of("b"), "b", Set.of())));
    }
}
