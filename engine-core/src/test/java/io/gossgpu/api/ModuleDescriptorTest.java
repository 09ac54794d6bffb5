package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReader;
import java.lang.module.ModuleReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Engine-core's built module descriptor (module-info.class in target/classes or the jar) exports, to every
 * module, exactly the packages {@link ApiSurfaceTest#EXPORTED} allows in the API's signatures; the internal packages go
 * to named modules only. Its {@code provides} agree with META-INF/services, so a backend or checkpoint reader found on
 * the class path is found on the module path too.
 */
class ModuleDescriptorTest {
    @Test
    void exportsTheApiAndTheSpiOnly() throws Exception {
        ModuleDescriptor core = descriptor();
        assertEquals("io.gossgpu.core", core.name());
        Set<String> unqualified = core.exports().stream()
                .filter(e -> !e.isQualified())
                .map(ModuleDescriptor.Exports::source)
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(
                new TreeSet<>(ApiSurfaceTest.EXPORTED), unqualified, "packages engine-core exports to every module");
        for (ModuleDescriptor.Exports e : core.exports())
            assertTrue(core.packages().contains(e.source()), "exported package exists: " + e.source());
    }

    @Test
    void providesWhatMetaInfServicesLists() throws Exception {
        ModuleDescriptor core = descriptor();
        for (String service : core.uses()) {
            Set<String> provided = core.provides().stream()
                    .filter(p -> p.service().equals(service))
                    .flatMap(p -> p.providers().stream())
                    .collect(Collectors.toCollection(TreeSet::new));
            assertEquals(services(service), provided, "providers of " + service);
        }
        assertEquals(Set.of("io.gossgpu.backend.BackendProvider", "io.gossgpu.model.CheckpointReader"), core.uses());
    }

    /** engine-core's descriptor, read from where its classes were loaded (target/classes or the jar). */
    static ModuleDescriptor descriptor() throws Exception {
        return module().descriptor();
    }

    private static ModuleReference module() throws Exception {
        Path where = Path.of(
                Engine.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Set<ModuleReference> found = ModuleFinder.of(where).findAll();
        assertEquals(1, found.size(), "one module at " + where);
        ModuleReference ref = found.iterator().next();
        assertTrue(!ref.descriptor().isAutomatic(), "engine-core has a module-info.class at " + where);
        return ref;
    }

    /** The class names engine-core's own META-INF/services file lists for {@code service}. */
    private static Set<String> services(String service) throws Exception {
        try (ModuleReader reader = module().open();
                InputStream in = reader.open("META-INF/services/" + service)
                        .orElseThrow(() -> new AssertionError("META-INF/services/" + service))) {
            return Arrays.stream(new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n"))
                    .map(l -> l.replaceAll("#.*", "").strip())
                    .filter(l -> !l.isEmpty())
                    .collect(Collectors.toCollection(TreeSet::new));
        }
    }
}
