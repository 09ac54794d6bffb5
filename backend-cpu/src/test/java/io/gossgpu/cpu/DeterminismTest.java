package io.gossgpu.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.cpu.matmul.NativeCpu;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Same input, same bits: the same forward pass ({@link ForwardHash}) in fresh JVMs gives the same logits, bit for
 * bit, whichever JIT tier runs the kernels (the default tiered JIT, C1 only, the interpreter) and whatever the
 * thread count (1 or 3). Each kernel set this machine runs is checked; the sets may differ from one another.
 */
class DeterminismTest {
    @ParameterizedTest
    @EnumSource(KernelSet.Isa.class)
    void freshJvmsGiveTheSameBits(KernelSet.Isa isa) throws Exception {
        Assumptions.assumeTrue(
                NativeCpu.supports(isa), () -> isa + " kernels cannot run here: " + NativeCpu.unavailableReason());
        String a = hash(isa, 3, List.of());
        assertEquals(a, hash(isa, 3, List.of()), "a second JVM, same settings");
        assertEquals(a, hash(isa, 1, List.of("-XX:TieredStopAtLevel=1")), "C1 only, one thread");
        assertEquals(a, hash(isa, 3, List.of("-Xint")), "interpreter only");
    }

    private static String hash(KernelSet.Isa isa, int threads, List<String> jvmFlags)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(List.of("--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Xmx512m"));
        cmd.addAll(jvmFlags);
        cmd.addAll(List.of(
                "-cp",
                System.getProperty("java.class.path"),
                ForwardHash.class.getName(),
                isa.knobValue(),
                String.valueOf(threads)));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(5, TimeUnit.MINUTES), "ForwardHash did not finish");
        assertEquals(0, p.exitValue(), out);
        return out.lines()
                .filter(l -> l.startsWith("hash "))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no hash in: " + out));
    }
}
