package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.BackendProvider;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.nio.file.Path;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The module descriptors of engine-core and the backends, as built, read from wherever the class path found
 * each backend provider (target/classes or a jar). Each backend is a named module that exports nothing and provides
 * the BackendProvider the class path found, so ServiceLoader finds the same backends on the module path. engine-core's
 * qualified exports name only the project's modules: javac only warns (and engine-core suppresses the warning, since
 * the class-path modules are not modules yet) where a target is misspelt, so this test is the check.
 */
class BackendModulesTest {
    /** The project's modules that run on the class path today, named as engine-core's qualified exports name them. */
    private static final Set<String> CLASS_PATH_MODULES = Set.of(
            "io.gossgpu.cli",
            "io.gossgpu.server",
            "io.gossgpu.langchain4j",
            "io.gossgpu.springai",
            "io.gossgpu.springai.autoconfigure",
            "io.gossgpu.benchmarks");

    /**
     * Backends that are automatic modules for now, with why: backend-cpu's warm-up runs a generated model from the
     * testkit, a class-path jar that shares packages with engine-core, so backend-cpu cannot have a module-info yet.
     */
    private static final Set<String> AUTOMATIC = Set.of("io.gossgpu.cpu");

    /** Named modules of the project that are no backend but that engine-core's qualified exports name. */
    private static final Set<String> LIBRARY_MODULES = Set.of("io.gossgpu.device");

    @Test
    void everyBackendIsANamedModuleThatExportsNothingAndProvidesItsBackend() throws Exception {
        Map<String, ModuleDescriptor> modules = new TreeMap<>();
        Map<String, Set<String>> providers = new TreeMap<>();
        for (ServiceLoader.Provider<BackendProvider> p :
                ServiceLoader.load(BackendProvider.class).stream().toList()) {
            ModuleDescriptor d = descriptor(p.type());
            modules.put(d.name(), d);
            providers
                    .computeIfAbsent(d.name(), k -> new TreeSet<>())
                    .add(p.type().getName());
        }
        assertEquals(
                Set.of("io.gossgpu.core", "io.gossgpu.cpu", "io.gossgpu.cuda", "io.gossgpu.opencl", "io.gossgpu.metal"),
                modules.keySet());
        for (ModuleDescriptor d : modules.values()) {
            Set<String> provided = new TreeSet<>();
            d.provides().stream()
                    .filter(p -> p.service().equals(BackendProvider.class.getName()))
                    .forEach(p -> provided.addAll(p.providers()));
            assertEquals(
                    providers.get(d.name()), provided, d.name() + " provides the backends META-INF/services lists");
            if (d.name().equals("io.gossgpu.core") || d.isAutomatic()) continue;
            assertEquals(Set.of(), d.exports(), d.name() + " exports nothing: it is found through the SPI");
            assertTrue(
                    d.requires().stream().anyMatch(r -> r.name().equals("io.gossgpu.core")),
                    d.name() + " requires io.gossgpu.core");
        }
        Set<String> known = new TreeSet<>(CLASS_PATH_MODULES);
        known.addAll(LIBRARY_MODULES);
        known.addAll(modules.keySet());
        for (ModuleDescriptor.Exports e : modules.get("io.gossgpu.core").exports()) {
            Set<String> unknown = new TreeSet<>(e.targets());
            unknown.removeAll(known);
            assertEquals(
                    Set.of(), unknown, "engine-core exports " + e.source() + " to modules the project does not have");
        }
    }

    private static ModuleDescriptor descriptor(Class<?> type) throws Exception {
        Path where =
                Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        Set<ModuleReference> found = ModuleFinder.of(where).findAll();
        assertEquals(1, found.size(), "one module at " + where);
        ModuleDescriptor d = found.iterator().next().descriptor();
        assertFalse(
                d.isAutomatic() && !AUTOMATIC.contains(d.name()),
                type.getName() + "'s module has a module-info.class at " + where);
        return d;
    }
}
