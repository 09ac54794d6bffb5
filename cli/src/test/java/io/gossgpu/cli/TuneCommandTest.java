package io.gossgpu.cli;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Backends;
import io.gossgpu.backend.Knob;
import io.gossgpu.opencl.OpenClBackend;
import io.gossgpu.opencl.OpenClBackendProvider;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code goss-gpu tune} end to end: on opencl (PoCL in CI) with --quick on the tiny model, and its one-line errors. */
class TuneCommandTest {
    @TempDir
    static Path dir;
    static Path model;

    @BeforeAll
    static void makeModel() {
        model = CommandLineTest.tinyModel(dir);
    }

    /** PoCL (scripts/setup-pocl.sh) makes opencl available in CI; elsewhere these tests are skipped with the reason. */
    static void requireOpenCl() {
        var a = Backends.safeAvailability(new OpenClBackendProvider());
        Assumptions.assumeTrue(a.available(), () -> "opencl unavailable: " + a.reason());
    }

    @Test
    void quickTuneOnOpenClPicksACandidateAndItsExportsAreAccepted() {
        requireOpenCl();
        List<Knob> knobs = new OpenClBackendProvider().knobs();
        Knob wg = knobs.stream().filter(k -> k.shortName().equals("SDPA_WG")).findFirst().orElseThrow();
        Knob tile = knobs.stream().filter(k -> k.shortName().equals("LINEAR_TILE")).findFirst().orElseThrow();
        CommandLineTest.Run r = CommandLineTest.run("", "tune", "--backend", "opencl", "--model", model.toString(), "--quick",
                "--knob", "SDPA_WG", "--knob", "goss_opencl_linear_tile");
        assertEquals(0, r.code(), r.err());
        // one progress line per candidate, 3 candidates per knob in quick mode
        assertEquals(6, r.err().lines().filter(l -> l.startsWith("GOSS_OPENCL_")).count(), r.err());
        Map<String, String> exports = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?m)^export (GOSS_OPENCL_[A-Z_]+)=(\\d+)$").matcher(r.out());
        while (m.find()) exports.put(m.group(1), m.group(2));
        assertEquals(List.of(wg.envName(), tile.envName()), List.copyOf(exports.keySet()), r.out());
        for (Knob k : List.of(wg, tile)) {
            int best = Integer.parseInt(exports.get(k.envName()));
            assertTrue(k.candidates().contains(best), k.envName() + "=" + best);
            // the table marks the same value best
            assertTrue(Pattern.compile("(?m)^\\| " + best + " \\| [0-9.]+ \\| [0-9.]+ \\| best \\|$")
                    .matcher(r.out().substring(r.out().indexOf(k.envName() + ":"))).find(), r.out());
        }
        assertTrue(r.out().contains("tuned:  prefill"), r.out());
        // tune sets nothing global; given the exports as settings, the backend accepts and uses them
        assertNull(System.getProperty(wg.propertyName()));
        BackendOptions exported = BackendOptions.defaults();
        for (Knob k : List.of(wg, tile)) exported = exported.with(k.envName(), exports.get(k.envName()));
        try (Backend b = Backends.open("opencl", exported)) {
            for (Knob k : List.of(wg, tile))
                assertEquals(Integer.parseInt(exports.get(k.envName())), ((OpenClBackend) b).knobs().get(k.envName()));
        }
    }

    @Test
    void anUnknownKnobNameListsTheValidOnes() {
        requireOpenCl();
        CommandLineTest.Run r = CommandLineTest.run("", "tune", "--backend", "opencl", "--model", model.toString(), "--knob", "WARP_SPEED");
        assertEquals(1, r.code());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().startsWith("goss-gpu: unknown knob 'WARP_SPEED' for opencl; valid: LINEAR_WG, LINEAR_TILE,"), r.err());
        assertTrue(r.err().contains("SDPA_WG") && r.err().contains("MOE_GROUPMIN"), r.err());
    }

    @Test
    void aBackendWithoutKnobsOrAnUnknownOneIsAOneLineError() {
        CommandLineTest.Run cpu = CommandLineTest.run("", "tune", "--backend", "cpu", "--model", model.toString());
        assertEquals(1, cpu.code());
        assertEquals("goss-gpu: backend 'cpu' has no tuning knobs (only the GPU backends opencl, cuda and metal do)", cpu.err().strip());
        CommandLineTest.Run none = CommandLineTest.run("", "tune", "--backend", "quantum");
        assertEquals(1, none.code());
        assertTrue(none.err().startsWith("goss-gpu: unknown backend 'quantum'") && none.err().strip().lines().count() == 1, none.err());
    }

    @Test
    void infoListsEachBackendsKnobs() {
        CommandLineTest.Run r = CommandLineTest.run("", "info", "--backends");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("opencl knobs") && r.out().contains("  GOSS_OPENCL_SDPA_WG = 64 (default; 16 on a CPU device)"), r.out());
        assertTrue(r.out().contains("  GOSS_CUDA_SDPA_BLOCK = 128 (default)  threads per block of attention; a multiple of 32 from 32 to 1024"),
                r.out());
        assertTrue(r.out().contains("GOSS_METAL_MOE_UP_TG"), r.out());
        // each available backend says what it runs on (cuda: the driver's CUDA version and the PTX it loads)
        assertTrue(r.out().contains("\n  reference: plain Java, always available (slow, exact)\n"), r.out());
        assertTrue(r.out().contains("\n  cpu: "), r.out());
    }
}
