package io.gossgpu.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class CpuFeaturesTest {
    @Test
    void picksTheWatchedX86FlagsInOrderAndFoldsMissingAmx() {
        String cpuinfo = """
                processor\t: 0
                vendor_id\t: AuthenticAMD
                model name\t: AMD EPYC 7B13
                flags\t\t: fpu sse2 f16c fma avx avx2 bmi2 sha_ni

                processor\t: 1
                model name\t: AMD EPYC 7B13
                flags\t\t: fpu sse2 f16c fma avx avx2 bmi2 sha_ni
                """;
        CpuFeatures f = CpuFeatures.parse(cpuinfo);
        assertTrue(f.known());
        assertEquals("AMD EPYC 7B13", f.name());
        assertEquals(List.of("avx2", "fma", "f16c"), f.present());
        assertEquals(
                "AMD EPYC 7B13, flags: avx2 fma f16c (not: avx512f avx512_vnni avx_vnni avx512_bf16 amx)",
                f.describe());
    }

    @Test
    void sapphireRapidsHasAll() {
        CpuFeatures f = CpuFeatures.parse(
                "model name : Intel Xeon\nflags : avx2 fma f16c avx512f avx512_vnni avx_vnni avx512_bf16 amx_bf16 amx_tile amx_int8\n");
        assertEquals(CpuFeatures.WATCHED_X86, f.present());
        assertEquals(
                "Intel Xeon, flags: avx2 fma f16c avx512f avx512_vnni avx_vnni avx512_bf16 amx_tile amx_int8 amx_bf16",
                f.describe());
    }

    @Test
    void aarch64ListsItsDotProductFlags() {
        CpuFeatures f = CpuFeatures.parse(
                "processor : 0\nFeatures : fp asimd evtstrm aes asimddp sve\nCPU implementer : 0x41\n");
        assertEquals(List.of("asimd", "asimddp", "sve"), f.present());
        assertEquals(List.of("i8mm", "bf16"), f.absent());
    }

    @Test
    void noFlagsLineIsUnknownNotEmpty() {
        CpuFeatures f = CpuFeatures.parse("model name : Something\n");
        assertFalse(f.known());
        assertTrue(f.describe().contains("flags: unknown"), f.describe());
    }
}
