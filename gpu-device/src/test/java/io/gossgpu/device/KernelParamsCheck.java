package io.gossgpu.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.RecordComponent;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Checks a backend's {@link KernelParams} records against the params structs of its kernel sources: the same names,
 * and the same fields in the same order with matching types. Each backend's tests call {@link #assertMirrors} with
 * its program's source and the records its launchers declare.
 */
public final class KernelParamsCheck {
    /** A struct field: its Java type ({@code int}, {@code long}, {@code float} or {@code double}) and name. */
    public record Field(String type, String name) {}

    private static final Pattern STRUCT = Pattern.compile("struct\\s+(\\w+)\\s*\\{([^}]*)\\}\\s*;");
    private static final Pattern TYPEDEF = Pattern.compile("typedef\\s+struct\\s*\\w*\\s*\\{([^}]*)\\}\\s*(\\w+)\\s*;");

    private KernelParamsCheck() {}

    /** Every struct declared in {@code source} whose name ends in {@code Params}, by name, its fields in order. */
    public static Map<String, List<Field>> structs(String source) {
        String code = source.replaceAll("//[^\n]*", "").replaceAll("(?s)/\\*.*?\\*/", "");
        Map<String, List<Field>> out = new LinkedHashMap<>();
        for (Matcher m = TYPEDEF.matcher(code); m.find(); ) put(out, m.group(2), m.group(1));
        for (Matcher m = STRUCT.matcher(code); m.find(); ) put(out, m.group(1), m.group(2));
        return out;
    }

    private static void put(Map<String, List<Field>> out, String name, String body) {
        if (!name.endsWith("Params")) return;
        List<Field> fields = new ArrayList<>();
        for (String decl : body.split(";")) {
            decl = decl.trim().replaceAll("\\s+", " ");
            if (decl.isEmpty()) continue;
            Matcher m = Pattern.compile("^(.*?)\\s*(\\w+(?:\\s*,\\s*\\w+)*)$").matcher(decl);
            if (!m.matches()) throw new AssertionError(name + ": cannot read the field declaration '" + decl + "'");
            String type = javaType(name, m.group(1));
            for (String f : m.group(2).split(",")) fields.add(new Field(type, f.trim()));
        }
        if (out.put(name, fields) != null) throw new AssertionError("struct " + name + " is declared twice");
    }

    private static String javaType(String struct, String c) {
        return switch (c.replace("const ", "").trim()) {
            case "int", "uint", "unsigned", "unsigned int", "int32_t", "uint32_t" -> "int";
            case "long", "ulong", "long long", "unsigned long long", "int64_t", "uint64_t", "size_t" -> "long";
            case "float" -> "float";
            case "double" -> "double";
            default ->
                throw new AssertionError(struct + ": field type '" + c + "' is not a kernel param type"
                        + " (int or uint, a 64-bit integer, float or double)");
        };
    }

    /** The fields of a params record, as {@link #structs} reads a struct. */
    public static List<Field> fields(Class<? extends KernelParams> record) {
        List<Field> out = new ArrayList<>();
        for (RecordComponent c : record.getRecordComponents())
            out.add(new Field(c.getType().getName(), c.getName()));
        return out;
    }

    /**
     * Each record mirrors the struct of its name in {@code source}, and every params struct there has its record:
     * a struct that no launcher writes is a kernel no launcher can call.
     */
    public static void assertMirrors(String source, Collection<Class<? extends KernelParams>> records) {
        Map<String, List<Field>> structs = structs(source);
        assertFalse(records.isEmpty(), "no KernelParams records given");
        for (Class<? extends KernelParams> r : records) {
            List<Field> c = structs.get(r.getSimpleName());
            assertTrue(c != null, "no struct " + r.getSimpleName() + " in the kernel sources, for " + r.getName());
            assertEquals(
                    c,
                    fields(r),
                    r.getName() + " against struct " + r.getSimpleName() + " (field types and names in order)");
            KernelParams.layout(r); // its layout can be built
        }
        var missing = new TreeSet<>(structs.keySet());
        records.forEach(r -> missing.remove(r.getSimpleName()));
        assertTrue(missing.isEmpty(), "params structs with no KernelParams record: " + missing);
    }

    /** The KernelParams records compiled in {@code anchor}'s package (nested ones included), from its classes folder. */
    @SuppressWarnings("unchecked")
    public static List<Class<? extends KernelParams>> recordsIn(Class<?> anchor) {
        String pkg = anchor.getPackageName();
        try {
            Path dir = Path.of(anchor.getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI())
                    .resolve(pkg.replace('.', '/'));
            List<Class<? extends KernelParams>> out = new ArrayList<>();
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".class"))
                        .sorted()
                        .toList()) {
                    String name = f.getFileName().toString();
                    Class<?> c = Class.forName(
                            pkg + "." + name.substring(0, name.length() - 6), false, anchor.getClassLoader());
                    if (c.isRecord() && KernelParams.class.isAssignableFrom(c))
                        out.add((Class<? extends KernelParams>) c);
                }
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException | ClassNotFoundException e) {
            throw new AssertionError(e);
        }
    }
}
