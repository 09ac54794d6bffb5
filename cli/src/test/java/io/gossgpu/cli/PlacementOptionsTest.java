package io.gossgpu.cli;

import static io.gossgpu.cli.CommandLineTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.Backends;
import io.gossgpu.cli.CommandLineTest.Run;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --cpu-moe} and {@code --n-cpu-moe}: bad values are one-line errors on every command that takes them; {@code info}
 * prints the plan and each side's memory before loading; a split model answers (OpenCL + cpu, where PoCL is there).
 */
class PlacementOptionsTest {
    @TempDir
    static Path dir;

    static Path model;

    @BeforeAll
    static void makeModel() {
        model = dir.resolve("m");
        Run r = run(
                "",
                "make-test-model",
                "--format",
                "original",
                "--preset",
                "demo",
                "--layers",
                "2",
                "--seed",
                "3",
                "--out",
                model.toString());
        assertEquals(0, r.code(), r.err());
    }

    private static void assertOneLineError(Run r, String message) {
        assertEquals(1, r.code(), r.out() + r.err());
        assertTrue(r.err().strip().lines().count() == 1 && r.err().contains(message), r.err());
    }

    @Test
    void badValuesAreOneLineErrors() {
        String m = model.toString();
        assertOneLineError(
                run("", "--model", m, "--backend", "cpu", "--n-cpu-moe", "-1", "--prompt", "hi", "-n", "1"),
                "--n-cpu-moe must be 0 or more, got -1");
        assertOneLineError(
                run("", "--model", m, "--backend", "cpu", "--n-cpu-moe", "3", "--prompt", "hi", "-n", "1"),
                "--n-cpu-moe must be between 0 and the model's 2 layers, got 3");
        assertOneLineError(
                run("", "--model", m, "--backend", "cpu", "--cpu-moe", "--n-cpu-moe", "1", "--prompt", "hi", "-n", "1"),
                "give --cpu-moe or --n-cpu-moe, not both");
        assertOneLineError(
                run(
                        "",
                        "--model",
                        m,
                        "--backend",
                        "cpu",
                        "--n-cpu-moe",
                        "1",
                        "--stream-experts-min-t",
                        "-1",
                        "--prompt",
                        "hi",
                        "-n",
                        "1"),
                "--stream-experts-min-t must be 0 (off) or more, got -1");
        assertOneLineError(
                run("", "info", "--model", m, "--backend", "cpu", "--n-cpu-moe", "3"),
                "--n-cpu-moe must be between 0 and the model's 2 layers, got 3");
        assertOneLineError(
                run("", "verify", "--model", m, "--backend", "cpu", "--n-cpu-moe", "5", "--tokens", "1,2"),
                "--n-cpu-moe must be between 0 and the model's 2 layers, got 5");
    }

    @Test
    void infoOnTheCpuSaysEverythingIsThere() {
        Run r = run("", "info", "--model", model.toString(), "--backend", "cpu");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("placement  everything on cpu"), r.out());
    }

    @Test
    void infoPrintsTheSplitPlanAndASplitModelAnswersOnOpenCl() {
        Assumptions.assumeTrue(
                Backends.safeAvailability(Backends.provider("opencl")).available(), "needs an OpenCL platform (PoCL)");
        String m = model.toString();
        Run info = run("", "info", "--model", m, "--backend", "opencl", "--n-cpu-moe", "1");
        assertEquals(0, info.code(), info.err());
        assertTrue(
                info.out().contains("placement  --n-cpu-moe 1: experts of layers 0 on the CPU, 1 on the GPU"),
                info.out());
        assertTrue(
                info.out()
                        .matches(
                                "(?s).*GPU memory [0-9.]+ [KMG]iB of weights \\([0-9.]+ [KMG]iB without experts \\+ 1 layers' experts\\).*"),
                info.out());
        assertTrue(
                info.out()
                        .matches(
                                "(?s).*CPU memory [0-9.]+ [KMG]iB of experts \\(1 layers\\), run by the cpu backend.*"),
                info.out());
        Run streamed = run(
                "", "info", "--model", m, "--backend", "opencl", "--n-cpu-moe", "1", "--stream-experts-min-t", "64");
        assertEquals(0, streamed.code(), streamed.err());
        assertTrue(
                streamed.out()
                        .contains("placement  --n-cpu-moe 1 --stream-experts-min-t 64: experts of layers 0 on the CPU"),
                streamed.out());
        Run auto = run("", "info", "--model", m, "--backend", "opencl");
        assertTrue(auto.out().contains("placement  auto: experts of all 2 layers on the GPU"), auto.out());

        Run split = run(
                "",
                "--model",
                m,
                "--backend",
                "opencl",
                "--cpu-moe",
                "--raw",
                "--prompt",
                "The sea is",
                "-n",
                "4",
                "--seed",
                "1",
                "-v");
        assertEquals(0, split.code(), split.err());
        assertTrue(split.err().contains("MoE experts of some layers on the CPU"), split.err());
    }
}
