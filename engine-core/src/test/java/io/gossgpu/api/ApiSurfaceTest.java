package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What an application compiles against is {@code io.gossgpu.api} (and the exception type every call may
 * throw); the engine's internal packages (generate, harmony, model, cpu, graph, ...) must not leak through it. Every
 * public type of the package is read by reflection: the signatures of its public and protected constructors,
 * methods and fields, its record components, supertypes and type parameters, each down to type arguments, bounds
 * and array components. A type from another {@code io.gossgpu} package than {@link #EXPORTED} fails the test, naming
 * where it appears.
 */
class ApiSurfaceTest {
    /** The packages an application may see: the API, the project's exception, and the backend SPI (custom backends). */
    static final Set<String> EXPORTED = Set.of("io.gossgpu", "io.gossgpu.api", "io.gossgpu.backend");

    @Test
    void noPublicSignatureOfTheApiNamesAnInternalType() throws Exception {
        List<Class<?>> types = publicTypes("io.gossgpu.api");
        assertTrue(types.size() > 10, "the scan found the API's types: " + types);
        Set<String> leaks = new TreeSet<>();
        for (Class<?> c : types) leaks.addAll(leaks(c));
        assertEquals(Set.of(), leaks, "internal types in the API's public signatures:\n" + String.join("\n", leaks));
    }

    /** The scan itself catches each kind of leak (a check that finds nothing anywhere would pass on any API). */
    @Test
    void theScanSeesLeaksInEveryKindOfSignature() {
        Set<String> found = leaks(Planted.class);
        for (String where : List.of(
                "Planted.field",
                "Planted.method(param 0)",
                "Planted.method(return)",
                "Planted.<init>(param 0)",
                "Planted.component",
                "Planted.generic(return)",
                "Planted.array(return)",
                "Planted<T bound>"))
            assertTrue(
                    found.stream().anyMatch(l -> l.startsWith("ApiSurfaceTest$" + where + ": ")),
                    where + " not found in " + found);
        assertTrue(found.stream().noneMatch(l -> l.contains("hidden")), "private members are not the API: " + found);
    }

    /** Deliberately leaky: each member names an internal type in another position. */
    @SuppressWarnings("unused")
    public record Planted<T extends io.gossgpu.harmony.Message>(io.gossgpu.model.ModelConfig component) {
        public Planted(io.gossgpu.generate.SamplerConfig s) {
            this((io.gossgpu.model.ModelConfig) null);
        }

        public static io.gossgpu.harmony.Role field;
        private static io.gossgpu.harmony.Role hidden;

        public io.gossgpu.generate.Sampler method(io.gossgpu.generate.SamplerConfig s) {
            return null;
        }

        public List<? extends io.gossgpu.generate.GenerationResult> generic() {
            return null;
        }

        public io.gossgpu.model.Checkpoint[] array() {
            return null;
        }
    }

    static Set<String> leaks(Class<?> c) {
        Set<String> out = new TreeSet<>();
        String name = c.getName().substring(c.getPackageName().length() + 1);
        for (TypeVariable<?> v : c.getTypeParameters())
            for (Type b : v.getBounds()) check(b, name + "<" + v.getName() + " bound>", out);
        if (c.getGenericSuperclass() != null) check(c.getGenericSuperclass(), name + " extends", out);
        for (Type i : c.getGenericInterfaces()) check(i, name + " implements", out);
        if (c.isRecord())
            for (RecordComponent rc : c.getRecordComponents())
                check(rc.getGenericType(), name + "." + rc.getName(), out);
        for (Field f : c.getDeclaredFields()) if (visible(f)) check(f.getGenericType(), name + "." + f.getName(), out);
        for (Constructor<?> k : c.getDeclaredConstructors()) if (visible(k)) executable(k, name + ".<init>", out);
        for (Method m : c.getDeclaredMethods()) {
            if (!visible(m) || m.isSynthetic() || m.isBridge()) continue;
            executable(m, name + "." + m.getName(), out);
            check(m.getGenericReturnType(), name + "." + m.getName() + "(return)", out);
        }
        return out;
    }

    private static void executable(Executable e, String where, Set<String> out) {
        for (TypeVariable<?> v : e.getTypeParameters())
            for (Type b : v.getBounds()) check(b, where + "<" + v.getName() + " bound>", out);
        Type[] params = e.getGenericParameterTypes();
        for (int i = 0; i < params.length; i++) check(params[i], where + "(param " + i + ")", out);
        for (Type x : e.getGenericExceptionTypes()) check(x, where + "(throws)", out);
    }

    private static boolean visible(Member m) {
        int mod = m.getModifiers();
        if (!Modifier.isPublic(mod) && !Modifier.isProtected(mod)) return false;
        // a protected member of a final class (or of an enum/record) cannot be reached from outside the package
        return Modifier.isPublic(mod) || !Modifier.isFinal(m.getDeclaringClass().getModifiers());
    }

    private static void check(Type t, String where, Set<String> out) {
        switch (t) {
            case Class<?> k when k.isArray() -> check(k.getComponentType(), where, out);
            case Class<?> k -> {
                String p = k.getPackageName();
                if (p.startsWith("io.gossgpu") && !EXPORTED.contains(p)) out.add(where + ": " + k.getName());
            }
            case ParameterizedType p -> {
                check(p.getRawType(), where, out);
                for (Type a : p.getActualTypeArguments()) check(a, where, out);
            }
            case GenericArrayType g -> check(g.getGenericComponentType(), where, out);
            case WildcardType w -> {
                for (Type b : w.getUpperBounds()) check(b, where, out);
                for (Type b : w.getLowerBounds()) check(b, where, out);
            }
            case TypeVariable<?> v -> {} // its bounds are checked where it is declared
            default -> throw new AssertionError("unexpected type " + t);
        }
    }

    /** The public top-level and nested types of {@code pkg}, from the compiled classes (test classes excluded). */
    static List<Class<?>> publicTypes(String pkg) throws IOException, URISyntaxException, ClassNotFoundException {
        Path dir = Path.of(Engine.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toURI())
                .resolve(pkg.replace('.', '/'));
        List<Class<?>> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f :
                    files.filter(f -> f.toString().endsWith(".class")).sorted().toList()) {
                String n = f.getFileName().toString();
                Class<?> c = Class.forName(
                        pkg + "." + n.substring(0, n.length() - ".class".length()),
                        false,
                        ApiSurfaceTest.class.getClassLoader());
                if (!c.isAnonymousClass() && !c.isLocalClass() && reachable(c)) out.add(c);
            }
        }
        return out;
    }

    /** Public, and every enclosing class public too. */
    private static boolean reachable(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getEnclosingClass())
            if (!Modifier.isPublic(k.getModifiers())) return false;
        return true;
    }
}
