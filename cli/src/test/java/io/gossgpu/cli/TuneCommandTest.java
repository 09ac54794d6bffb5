package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Backends;
import io.gossgpu.backend.Knob;
import io.gossgpu.backend.KnobState;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.opencl.OpenCl;
import io.gossgpu.opencl.OpenClBackend;
import io.gossgpu.opencl.OpenClBackendProvider;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** {@code goss-gpu tune} end to end: on opencl (PoCL in CI) with --quick on the tiny model, and its one-line errors. */
class TuneCommandTest extends TinyModelTest {
    /** PoCL (scripts/setup-pocl.sh) makes opencl available in CI; elsewhere these tests are skipped with the reason. */
    static void requireOpenCl() {
        var a = Backends.safeAvailability(new OpenClBackendProvider());
        Assumptions.assumeTrue(a.available(), () -> "opencl unavailable: " + a.reason());
    }

    @Test
    void quickTuneOnOpenClPicksACandidateAndItsExportsAreAccepted() {
        requireOpenCl();
        List<Knob> knobs = new OpenClBackendProvider().knobs();
        Knob wg = knobs.stream()
                .filter(k -> k.shortName().equals("ATTENTION_WG"))
                .findFirst()
                .orElseThrow();
        Knob tile = knobs.stream()
                .filter(k -> k.shortName().equals("DENSE_TILE_T"))
                .findFirst()
                .orElseThrow();
        CommandLineTest.Run r = CommandLineTest.run(
                "",
                "tune",
                "--backend",
                "opencl",
                "--model",
                model.toString(),
                "--quick",
                "--knob",
                "ATTENTION_WG",
                "--knob",
                "goss_opencl_dense_tile_t");
        assertEquals(0, r.code(), r.err());
        // one progress line per candidate, 3 candidates per knob in quick mode
        assertEquals(
                6, r.err().lines().filter(l -> l.startsWith("GOSS_OPENCL_")).count(), r.err());
        // around the value in effect on this device (16 on a CPU device such as PoCL's), not the declared 64
        KnobState inEffect = new OpenClBackendProvider()
                .knobStates(BackendOptions.defaults()).stream()
                        .filter(s -> s.knob().equals(wg))
                        .findFirst()
                        .orElseThrow();
        assertTrue(
                r.err().lines().anyMatch(l -> l.startsWith(wg.envName() + "=" + inEffect.value() + ": ")),
                inEffect + "\n" + r.err());
        Map<String, String> best = new LinkedHashMap<>();
        for (Knob k : List.of(wg, tile)) {
            Matcher b = Pattern.compile("(?m)^\\| (\\d+) \\| [0-9.]+ \\| [0-9.]+ \\| best \\|$")
                    .matcher(r.out().substring(r.out().indexOf(k.envName() + ":")));
            assertTrue(b.find(), r.out());
            best.put(k.envName(), b.group(1));
        }
        assertLoadAverageAndVerdict(r);
        Map<String, String> exports = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?m)^export (GOSS_OPENCL_[A-Z_]+)=(\\d+)$").matcher(r.out());
        while (m.find()) exports.put(m.group(1), m.group(2));
        // exported only when the tuned values beat those in effect in the alternating rounds; then each knob's best
        assertEquals(r.out().contains("verdict: the tuned values win") ? best : Map.of(), exports, r.out());
        for (Knob k : List.of(wg, tile)) {
            int value = Integer.parseInt(best.get(k.envName()));
            assertTrue(k.candidates().contains(value), k.envName() + "=" + value);
        }
        // tune sets nothing global; given the picks as settings, the backend accepts and uses them
        assertNull(System.getProperty(wg.propertyName()));
        BackendOptions exported = BackendOptions.defaults();
        for (Knob k : List.of(wg, tile)) exported = exported.with(k.envName(), best.get(k.envName()));
        try (Backend b = Backends.open("opencl", exported)) {
            for (Knob k : List.of(wg, tile))
                assertEquals(
                        Integer.parseInt(best.get(k.envName())),
                        ((OpenClBackend) b).knobs().get(k.envName()));
        }
    }

    /** The load average at start and end, and a verdict with its rule (or nothing to change). */
    static void assertLoadAverageAndVerdict(CommandLineTest.Run r) {
        assertTrue(
                r.err().contains("tune: load average ")
                        && r.err().contains(" at start")
                        && r.err().contains(" at end"),
                r.err());
        assertTrue(r.out().matches("(?s).*\nload average: \\S+ at start, \\S+ at end \\(\\d+ CPUs\\)\n.*"), r.out());
        boolean changed = !r.out().contains("verdict: every knob's best is the value in effect");
        if (changed) {
            assertTrue(r.out().contains("rule: " + io.gossgpu.bench.TuneVerdict.RULE), r.out());
            assertEquals(
                    3,
                    r.err().lines().filter(l -> l.startsWith("tune: round ")).count(),
                    "three rounds with --quick: " + r.err());
            assertTrue(
                    r.out().contains("verdict: the tuned values win")
                            != r.out().contains("verdict: keeping the values in effect"),
                    r.out());
        }
        if (!r.out().contains("verdict: the tuned values win"))
            assertFalse(r.out().contains("export "), r.out());
    }

    @Test
    void anUnknownKnobNameListsTheValidOnes() {
        requireOpenCl();
        CommandLineTest.Run r = CommandLineTest.run(
                "", "tune", "--backend", "opencl", "--model", model.toString(), "--knob", "WARP_SPEED");
        assertEquals(1, r.code());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(
                r.err().startsWith("goss-gpu: unknown knob 'WARP_SPEED' for opencl; valid: DENSE_WG, DENSE_TILE_T,"),
                r.err());
        assertTrue(r.err().contains("ATTENTION_WG") && r.err().contains("MOE_PREFILL_MIN_T"), r.err());
    }

    @Test
    void aBackendWithoutKnobsOrAnUnknownOneIsAOneLineError() {
        CommandLineTest.Run ref =
                CommandLineTest.run("", "tune", "--backend", "reference", "--model", model.toString());
        assertEquals(1, ref.code());
        assertEquals(
                "goss-gpu: backend 'reference' has no tuning knobs (cpu, opencl, cuda and metal have)",
                ref.err().strip());
        CommandLineTest.Run none = CommandLineTest.run("", "tune", "--backend", "quantum");
        assertEquals(1, none.code());
        assertTrue(
                none.err().startsWith("goss-gpu: unknown backend 'quantum'")
                        && none.err().strip().lines().count() == 1,
                none.err());
    }

    /** Tune said the cpu backend had no knobs; its threads and kernel family are swept now. */
    @Test
    void quickTuneOnCpuSweepsThreadsAndTheKernelFamily() {
        List<KnobState> states = new CpuBackendProvider().knobStates(BackendOptions.defaults());
        CommandLineTest.Run r =
                CommandLineTest.run("", "tune", "--backend", "cpu", "--model", model.toString(), "--quick");
        assertEquals(0, r.code(), r.err());
        for (KnobState s : states) {
            List<String> timed = r.err()
                    .lines()
                    .filter(l -> l.startsWith(s.knob().envName() + "="))
                    .map(l -> l.substring(l.indexOf('=') + 1, l.indexOf(':')))
                    .toList();
            List<String> expected = s.candidates().stream().map(s.knob()::text).toList();
            if (expected.size() < 2) {
                assertEquals(List.of(), timed, "nothing to choose on this machine: " + r.err());
                continue;
            }
            // the value in effect and its neighbours, among what this machine runs
            assertTrue(
                    timed.contains(s.text())
                            && expected.containsAll(timed)
                            && timed.size() == Math.min(3, expected.size()),
                    s.knob().envName() + " timed " + timed + " of " + expected + ": " + r.err());
            Matcher m = Pattern.compile("(?m)^export " + s.knob().envName() + "=(\\S+)$")
                    .matcher(r.out());
            // exported only when the tuned values beat those in effect in the alternating rounds
            assertEquals(r.out().contains("verdict: the tuned values win"), m.find(), r.out());
            if (r.out().contains("verdict: the tuned values win"))
                assertTrue(timed.contains(m.group(1)), m.group(1) + " " + timed);
        }
        assertLoadAverageAndVerdict(r);
    }

    /** Info showed declared defaults, host ranges and "33 (set)" unflagged; now the device's. */
    @Test
    void infoShowsEachKnobsValueInEffectOnThisDeviceWhereItCameFromAndTheDevicesRange() throws Exception {
        requireOpenCl();
        List<OpenCl.DeviceInfo> devices = OpenCl.devices();
        OpenCl.DeviceInfo d =
                devices.stream().filter(OpenCl.DeviceInfo::isGpu).findFirst().orElse(devices.getFirst());
        String range = "a power of two from 1 to " + Math.min(1 << 20, d.maxWorkGroupSize())
                + " (the device's max work-group size is " + d.maxWorkGroupSize() + ")";
        CommandLineTest.Run r = CommandLineTest.run("", "info", "--backends");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("opencl knobs in effect on this device"), r.out());
        assertTrue(
                r.out()
                        .contains("  GOSS_OPENCL_ATTENTION_WG = "
                                + (d.isGpu() ? "64 (default)" : "16 (device default: 16 on a CPU device)")
                                + "  work-group size of attention: keys per chunk of the online softmax; " + range
                                + "\n"),
                r.out());
        assertTrue(
                r.out()
                        .contains("  GOSS_OPENCL_ATTENTION_SPLITBELOW = " + 8 * d.computeUnits()
                                + " (device default: 8 per compute unit of the device)"),
                r.out());
        int cpus = Runtime.getRuntime().availableProcessors();
        assertTrue(
                r.out().contains("cpu knobs in effect on this device")
                        && r.out()
                                .contains("  GOSS_CPU_THREADS = " + cpus
                                        + (cpus == 1 ? " (default)" : " (device default: every available processor)")),
                r.out());
        assertTrue(
                r.out()
                        .contains(
                                "  GOSS_CUDA_ATTENTION_BLOCK = 128 (default)  threads per block of attention; a multiple of 32 from 32 to 1024"),
                r.out());
        assertTrue(r.out().contains("GOSS_METAL_MOE_GATE_UP_TG"), r.out());
        // each available backend says what it runs on (cuda: the driver's CUDA version and the PTX it loads)
        assertTrue(r.out().contains("\n  reference: plain Java, always available (slow, exact)\n"), r.out());
        assertTrue(r.out().contains("\n  cpu: "), r.out());
        // a system property is read once, at the edge: in a JVM of its own, so no other test sees it
        CommandLineTest.Run bad = CommandLineTest.runInNewJvm(
                System.getenv(), List.of("-Dgoss.opencl.attention.wg=33"), "info", "--backends");
        assertTrue(
                bad.out()
                        .contains(
                                "  GOSS_OPENCL_ATTENTION_WG = 33 (-Dgoss.opencl.attention.wg)  work-group size of attention: keys per chunk of "
                                        + "the online softmax; INVALID: work-group size must be " + range + "\n"),
                bad.out() + bad.err());
    }
}
