package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
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
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The boundary of the applications: cli and server use the engine through the api package
 * ({@code io.gossgpu.api}) and the backend SPI ({@code io.gossgpu.backend}) only, plus the types the api itself hands
 * out in its public signatures (api and SPI types only). cli may also use the server module's public entry
 * ({@code io.gossgpu.server}) and, for its developer commands, the tools module's ({@code io.gossgpu.tools}). Every other engine class named in their main code (import or
 * fully qualified name, comments aside) must be in {@link #NOT_YET} with the reason; an entry no longer needed fails too,
 * so the list only shrinks.
 */
class BoundaryTest {
    /** Engine classes cli and server still use outside the api: each is work not done, with why it is there. */
    private static final Set<String> NOT_YET = new TreeSet<>(List.of(
            // (empty: cli's developer commands reach the engine through io.gossgpu.tools)
            ));

    private static final Pattern CLASS_NAME =
            Pattern.compile("\\bio\\.gossgpu\\.((?:[a-z0-9_]+\\.)*[a-z0-9_]+)\\.([A-Z]\\w*)");

    @Test
    void cliAndServerUseTheApiAndTheSpiOnly() throws IOException {
        Set<String> surface = apiSurface();
        Map<String, List<String>> outside = new TreeMap<>();
        scan("cli", Path.of("src/main/java"), Set.of("api", "backend", "cli", "server", "tools"), surface, outside);
        scan("server", Path.of("../server/src/main/java"), Set.of("api", "backend", "server"), surface, outside);
        Set<String> unexpected = new TreeSet<>(outside.keySet());
        unexpected.removeAll(NOT_YET);
        Set<String> stale = new TreeSet<>(NOT_YET);
        stale.removeAll(outside.keySet());
        StringBuilder why = new StringBuilder();
        for (String u : unexpected) why.append("\n  ").append(u).append(" in ").append(outside.get(u));
        assertEquals(
                Set.of(),
                unexpected,
                "cli/server use engine classes outside io.gossgpu.api and the backend SPI:" + why);
        assertEquals(Set.of(), stale, "no longer used: remove from NOT_YET");
    }

    /**
     * The context check is the engine's (Engine.open): cli and server had one each, worded apart; neither
     * compares with the model's maximum itself again.
     */
    @Test
    void theContextCheckIsTheEnginesOnly() throws IOException {
        for (Path root : List.of(Path.of("src/main/java"), Path.of("../server/src/main/java")))
            try (Stream<Path> files = Files.walk(root)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    String code = withoutComments(Files.readString(f));
                    for (String own : List.of("maxContextLength", "exceeds this model's maximum"))
                        assertEquals(
                                -1,
                                code.indexOf(own),
                                f + " checks the context itself (" + own + "); Engine.open does");
                }
            }
    }

    /** Every engine class named in {@code module}'s main code outside {@code allowed} packages and the api's surface. */
    private static void scan(
            String module, Path root, Set<String> allowed, Set<String> surface, Map<String, List<String>> outside)
            throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String code = withoutComments(Files.readString(f));
                Matcher m = CLASS_NAME.matcher(code);
                while (m.find()) {
                    String pkg = m.group(1), cls = "io.gossgpu." + pkg + "." + m.group(2);
                    if (allowed.contains(pkg) || surface.contains(cls)) continue;
                    outside.computeIfAbsent(module + " " + cls, k -> new ArrayList<>())
                            .add(f.getFileName().toString());
                }
            }
        }
    }

    private static String withoutComments(String code) {
        return code.replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\\n]*", "");
    }

    /**
     * The engine types the api hands out: those named in the public signatures (parameters, results, fields, record
     * components, type arguments) of the api's public classes, with their nested types.
     */
    static Set<String> apiSurface() throws IOException {
        Set<String> out = new TreeSet<>();
        try (Stream<Path> files = Files.list(Path.of("../engine-core/src/main/java/io/gossgpu/api"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java") && !p.endsWith("package-info.java"))
                    .toList()) {
                Class<?> c;
                try {
                    c = Class.forName(
                            "io.gossgpu.api." + f.getFileName().toString().replace(".java", ""));
                } catch (ClassNotFoundException e) {
                    throw new AssertionError(e);
                }
                if (Modifier.isPublic(c.getModifiers())) addSignatures(c, out);
            }
        }
        return out;
    }

    private static void addSignatures(Class<?> c, Set<String> out) {
        for (Method m : c.getMethods()) {
            add(m.getGenericReturnType(), out);
            for (Type t : m.getGenericParameterTypes()) add(t, out);
        }
        for (var k : c.getConstructors()) for (Type t : k.getGenericParameterTypes()) add(t, out);
        for (Field f : c.getFields()) add(f.getGenericType(), out);
        if (c.isRecord()) for (RecordComponent r : c.getRecordComponents()) add(r.getGenericType(), out);
        for (Class<?> n : c.getClasses()) if (n.getName().startsWith("io.gossgpu.api.")) addSignatures(n, out);
    }

    private static void add(Type t, Set<String> out) {
        if (t instanceof ParameterizedType p) {
            add(p.getRawType(), out);
            for (Type a : p.getActualTypeArguments()) add(a, out);
        } else if (t instanceof WildcardType w) {
            for (Type b : w.getUpperBounds()) add(b, out);
        } else if (t instanceof Class<?> c) {
            while (c.isArray()) c = c.getComponentType();
            if (!c.getName().startsWith("io.gossgpu.")
                    || !out.add(topLevel(c).getName().replace('$', '.'))) return;
            for (Class<?> n : topLevel(c).getClasses()) out.add(n.getName().replace('$', '.'));
        }
    }

    private static Class<?> topLevel(Class<?> c) {
        while (c.getEnclosingClass() != null) c = c.getEnclosingClass();
        return c;
    }
}
