package io.gossgpu.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.KnobState;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.cpu.matmul.NativeCpu;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The cpu backend's choices (threads, and the int8 native versus float Java kernels) are knobs
 * that info, --verbose and tune see, with this machine's defaults and ranges.
 */
class CpuKnobsTest {
    final CpuBackendProvider cpu = new CpuBackendProvider();
    final int cpus =
            Math.min(CpuBackendProvider.MAX_THREADS, Runtime.getRuntime().availableProcessors());

    @Test
    void threadsAndKernelsAreKnobsWithThisMachinesDefaults() {
        assertEquals(
                List.of("GOSS_CPU_THREADS", "GOSS_CPU_KERNELS", "GOSS_CPU_DENSE", "GOSS_CPU_WARMUP"),
                cpu.knobs().stream().map(k -> k.envName()).toList());
        List<KnobState> s = cpu.knobStates(BackendOptions.defaults());
        KnobState threads = s.get(0), kernels = s.get(1);
        assertEquals(cpus, threads.value());
        assertEquals(cpus == 1 ? "default" : "device default: every available processor", threads.source());
        List<Integer> expected = new ArrayList<>();
        for (int t = 1; t < cpus; t *= 2) expected.add(t);
        expected.add(cpus);
        assertEquals(expected, threads.candidates(), "tune times powers of two up to this machine's processors");
        assertEquals(NativeCpu.best().knobValue(), kernels.text());
        assertEquals("device default: the fastest this machine runs", kernels.source());
        List<String> runs = new ArrayList<>(List.of("java"));
        if (NativeCpu.supports(KernelSet.Isa.AVX2)) runs.add("avx2");
        if (NativeCpu.supports(KernelSet.Isa.AVXVNNI)) runs.add("avxvnni");
        if (NativeCpu.supports(KernelSet.Isa.AVX512)) runs.add("avx512");
        assertEquals(
                runs,
                kernels.candidates().stream()
                        .map(CpuBackendProvider.KERNELS::text)
                        .toList(),
                "tune times what this CPU runs");
        assertTrue(kernels.allowed().startsWith("one of auto, java"), kernels.allowed());
        KnobState dense = s.get(2);
        assertEquals("q8", dense.text(), "float dense weights are quantized at load by default");
        assertEquals(List.of(0), dense.candidates(), "tune leaves the numerics alone");
        KnobState warmUp = s.get(3);
        assertEquals(1, warmUp.value(), "the JIT warm-up is on by default");
        assertEquals(List.of(1), warmUp.candidates(), "tune has nothing to time in the warm-up");
    }

    @Test
    void kernelsSetByNameAreWhatTheBackendRuns() {
        BackendOptions java = BackendOptions.defaults().with("GOSS_CPU_KERNELS", "Java");
        assertEquals(KernelSet.Isa.JAVA, CpuBackendProvider.kernels(java));
        assertEquals(
                "GOSS_CPU_KERNELS=java (code)", cpu.knobStates(java).get(1).brief(), "written as the name it matched");
        assertNull(CpuBackendProvider.kernels(BackendOptions.defaults()), "unset: auto");
        assertNull(CpuBackendProvider.kernels(BackendOptions.defaults().with("GOSS_CPU_KERNELS", "auto")));
        GossException e = assertThrows(
                GossException.class,
                () -> CpuBackendProvider.kernels(BackendOptions.defaults().with("GOSS_CPU_KERNELS", "sse")));
        assertTrue(
                e.getMessage().startsWith("invalid GOSS_CPU_KERNELS=sse: the kernel family must be one of auto, java"),
                e.getMessage());
        if (!NativeCpu.supports(KernelSet.Isa.AVX512)) {
            BackendOptions avx512 = BackendOptions.defaults().with("GOSS_CPU_KERNELS", "avx512");
            KnobState s = cpu.knobStates(avx512).get(1);
            assertFalse(s.valid());
            assertThrows(GossException.class, () -> cpu.create(avx512), "the backend refuses what the state flags");
        }
        assertFalse(cpu.knobStates(BackendOptions.defaults().with("GOSS_CPU_THREADS", "0"))
                .get(0)
                .valid());
        GossException d = assertThrows(
                GossException.class, () -> cpu.create(BackendOptions.defaults().with("GOSS_CPU_DENSE", "int4")));
        assertTrue(
                d.getMessage().startsWith("invalid GOSS_CPU_DENSE=int4: float dense weights must be one of q8, float"),
                d.getMessage());
    }
}
