package io.gossgpu.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import java.util.List;
import org.junit.jupiter.api.Test;

class KnobTest {
    static final Knob BLOCK = Knob.of(
            "cuda",
            "SDPA",
            "BLOCK",
            128,
            KnobValues.multipleOf(32, 32, 1024),
            "threads per block",
            "threads per block of attention");

    @Test
    void namesFollowTheBackendKernelKnobPattern() {
        assertEquals("GOSS_CUDA_SDPA_BLOCK", BLOCK.envName());
        assertEquals("goss.cuda.sdpa.block", BLOCK.propertyName());
        assertEquals("SDPA_BLOCK", BLOCK.shortName());
        Knob minT = Knob.of(
                "metal",
                "DENSE",
                "PREFILL_MIN_T",
                4,
                KnobValues.range(1, Integer.MAX_VALUE),
                "the batch threshold",
                "x");
        assertEquals("GOSS_METAL_DENSE_PREFILL_MIN_T", minT.envName());
        assertEquals("goss.metal.dense.prefill.min.t", minT.propertyName());
        Knob tg = Knob.of(
                "metal", "moe_gate_up", "TG", 256, KnobValues.multipleOf(32, 32, 1024), "threads per threadgroup", "x");
        assertEquals("GOSS_METAL_MOE_GATE_UP_TG", tg.envName());
        assertEquals("goss.metal.moe_gate_up.tg", tg.propertyName());
    }

    @Test
    void invalidValuesNameTheKnobTheValueAndTheRange() {
        assertEquals(96, BLOCK.parse(" 96 ", Integer.MAX_VALUE, null));
        for (String bad : new String[] {"100", "0", "2048", "abc", "-32"}) {
            GossException e = assertThrows(GossException.class, () -> BLOCK.parse(bad, Integer.MAX_VALUE, null));
            assertEquals(
                    "invalid GOSS_CUDA_SDPA_BLOCK=" + bad
                            + ": threads per block must be a multiple of 32 from 32 to 1024",
                    e.getMessage());
        }
        GossException lowered = assertThrows(GossException.class, () -> BLOCK.parse("768", 512, "kernel sdpa's limit"));
        assertEquals(
                "invalid GOSS_CUDA_SDPA_BLOCK=768: threads per block must be a multiple of 32 from 32 to 512 (kernel sdpa's limit)",
                lowered.getMessage());
    }

    @Test
    void theValueComesFromTheOptionsAndADefaultIsLoweredToTheDeviceLimit() {
        BackendOptions none = BackendOptions.defaults();
        assertEquals(128, BLOCK.value(none));
        assertEquals(64, BLOCK.value(none, 128, 80, "device"));
        BackendOptions set = none.with(BLOCK, 256);
        assertEquals(256, BLOCK.value(set));
        assertEquals(128, BLOCK.value(none), "options are values: setting one changes no other");
        GossException e = assertThrows(GossException.class, () -> BLOCK.value(none.with(BLOCK.envName(), "33")));
        assertEquals(
                "invalid GOSS_CUDA_SDPA_BLOCK=33: threads per block must be a multiple of 32 from 32 to 1024",
                e.getMessage());
    }

    @Test
    void theStateOnADeviceSaysTheValueInEffectWhereItCameFromAndTheDevicesRange() {
        BackendOptions none = BackendOptions.defaults();
        assertEquals(
                "GOSS_CUDA_SDPA_BLOCK = 128 (default)  threads per block of attention; a multiple of 32 from 32 to 1024",
                BLOCK.state(none).describe());
        // a device whose default differs, and that allows less than the declaration: its default and its range
        KnobState device = BLOCK.state(none, 96, 512, "kernel sdpa's limit");
        assertEquals(96, device.value());
        assertEquals(
                "GOSS_CUDA_SDPA_BLOCK = 96 (device default)  threads per block of attention; a multiple of 32 from 32 to 512 "
                        + "(kernel sdpa's limit)",
                device.describe());
        assertEquals(List.of(32, 64, 128, 256, 512), device.candidates(), "tune times only what the device allows");
        assertEquals(
                64, BLOCK.state(none, 128, 80, "device").value(), "a default the device does not allow is lowered");
        assertEquals(
                "GOSS_CUDA_SDPA_BLOCK=256 (code)",
                BLOCK.state(none.with(BLOCK, 256), 96, 512, null).brief());
        assertEquals(
                "GOSS_CUDA_SDPA_BLOCK=256 (--block)",
                BLOCK.state(none.with(BLOCK.envName(), "256", "--block")).brief());
        // a value set that the device refuses is flagged, with the device's range, and the error a backend would give
        KnobState bad = BLOCK.state(none.with(BLOCK.envName(), "768"), 96, 512, "kernel sdpa's limit");
        assertFalse(bad.valid());
        assertEquals(
                "GOSS_CUDA_SDPA_BLOCK = 768 (code)  threads per block of attention; INVALID: threads per block must be a multiple "
                        + "of 32 from 32 to 512 (kernel sdpa's limit)",
                bad.describe());
        assertEquals("GOSS_CUDA_SDPA_BLOCK=768 (code; INVALID)", bad.brief());
        assertEquals(
                assertThrows(
                                GossException.class,
                                () -> BLOCK.value(none.with(BLOCK.envName(), "768"), 96, 512, "kernel sdpa's limit"))
                        .getMessage(),
                bad.error());
        Knob noted = BLOCK.defaultNote("64 on small devices");
        assertEquals(
                "GOSS_CUDA_SDPA_BLOCK=64 (device default: 64 on small devices)",
                noted.state(none, 64, 1024, null).brief());
    }

    @Test
    void aNamedKnobTakesNamesAndADeviceAllowsTheNamesUpToItsLimit() {
        Knob kernels = Knob.setting(
                        "cpu",
                        "KERNELS",
                        0,
                        KnobValues.named("auto", "java", "avx2", "avx512"),
                        "the kernel family",
                        "kernels")
                .tuneValues(1, 2, 3);
        BackendOptions none = BackendOptions.defaults();
        assertEquals(2, kernels.value(none.with(kernels.envName(), " AVX2 ")));
        assertEquals("java", none.with(kernels, 1).get(kernels), "written as its name");
        GossException e = assertThrows(GossException.class, () -> kernels.value(none.with(kernels.envName(), "sse4")));
        assertEquals(
                "invalid GOSS_CPU_KERNELS=sse4: the kernel family must be one of auto, java, avx2, avx512",
                e.getMessage());
        GossException above = assertThrows(
                GossException.class, () -> kernels.value(none.with(kernels.envName(), "avx512"), 2, 2, "no AVX-512"));
        assertEquals(
                "invalid GOSS_CPU_KERNELS=avx512: the kernel family must be one of auto, java, avx2 (no AVX-512)",
                above.getMessage());
        KnobState s = kernels.state(none, 2, 2, "no AVX-512");
        assertEquals("avx2", s.text());
        assertEquals("device default", s.source());
        assertEquals(List.of(1, 2), s.candidates());
        assertEquals("one of 0, 1", KnobValues.oneOf(0, 1).describe(Integer.MAX_VALUE));
        assertEquals(
                List.of(0, 1, 2, 3, 4),
                KnobValues.named("a", "b", "c", "d", "e").candidates());
    }

    @Test
    void theEnvironmentIsReadForKnownBackendsAndAPropertyWinsAndIsNamedInErrors() {
        java.util.Properties props = new java.util.Properties();
        props.setProperty("goss.cuda.sdpa.block", "33");
        props.setProperty("goss.cuda.dense.prefill.min.t", "4");
        props.setProperty("user.home", "/x");
        BackendOptions o = BackendOptions.from(
                java.util.Map.of(
                        "GOSS_CUDA_SDPA_BLOCK",
                        "64",
                        "GOSS_CUDA_ARGMAX_BLOCK",
                        " 96 ",
                        "GOSS_MODEL",
                        "/m",
                        "GOSS_VULKAN_X",
                        "1",
                        "GOSS_CPU_THREADS",
                        " "),
                props,
                List.of("cuda", "cpu"));
        assertEquals("GOSS_CUDA_ARGMAX_BLOCK=96 GOSS_CUDA_DENSE_PREFILL_MIN_T=4 GOSS_CUDA_SDPA_BLOCK=33", o.toString());
        GossException e = assertThrows(GossException.class, () -> BLOCK.value(o));
        assertTrue(
                e.getMessage().startsWith("invalid GOSS_CUDA_SDPA_BLOCK=33 (set as -Dgoss.cuda.sdpa.block=33): "),
                e.getMessage());
        assertEquals(64, BLOCK.value(o.with(BLOCK, 64)), "a value given in code replaces the property");
        assertEquals("-Dgoss.cuda.sdpa.block", o.source("GOSS_CUDA_SDPA_BLOCK"));
        assertEquals("environment", o.source("GOSS_CUDA_ARGMAX_BLOCK"));
        assertEquals("code", o.with(BLOCK, 64).source("GOSS_CUDA_SDPA_BLOCK"));
        assertNull(o.source("GOSS_CUDA_MOE_BLOCK"));
        assertEquals("defaults", BackendOptions.defaults().toString());
    }

    @Test
    void aSettingOfTheWholeBackendHasNoKernelInItsNames() {
        Knob threads = Knob.setting("cpu", "THREADS", 1, KnobValues.range(1, 1024), "threads", "threads");
        assertEquals("GOSS_CPU_THREADS", threads.envName());
        assertEquals("goss.cpu.threads", threads.propertyName());
        assertEquals("THREADS", threads.shortName());
        Knob noCopy = Knob.setting("metal", "NO_COPY", 1, KnobValues.oneOf(0, 1), "the switch", "x");
        assertEquals("goss.metal.no.copy", noCopy.propertyName());
        assertEquals("GOSS_METAL_NO_COPY", BackendOptions.envName(noCopy.propertyName()));
    }

    @Test
    void candidatesComeFromTheDefinitionAndAreAllAccepted() {
        assertEquals(List.of(32, 64, 128, 256, 512, 1024), BLOCK.candidates());
        assertEquals(List.of(1, 2, 4, 8, 16), KnobValues.range(1, 16).candidates());
        assertEquals(List.of(0, 1), KnobValues.oneOf(0, 1).candidates());
        assertEquals(
                List.of(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
                KnobValues.powerOfTwo(1, 1 << 20).candidates());
        Knob k = BLOCK.tuneValues(64, 96);
        assertEquals(List.of(64, 96), k.candidates());
        for (KnobValues v :
                List.of(KnobValues.multipleOf(32, 32, 1024), KnobValues.range(3, 40), KnobValues.powerOfTwo(4, 300)))
            for (int c : v.candidates()) assertTrue(v.accepts(c, Integer.MAX_VALUE), v + " " + c);
        assertFalse(KnobValues.powerOfTwo(1, 1024).accepts(48, Integer.MAX_VALUE));
        assertEquals(
                "a power of two from 1 to 256",
                KnobValues.powerOfTwo(1, 1 << 20).describe(256));
        assertEquals("one of 0, 1", KnobValues.oneOf(0, 1).describe(Integer.MAX_VALUE));
        assertEquals(
                "an integer of at least 1",
                KnobValues.range(1, Integer.MAX_VALUE).describe(Integer.MAX_VALUE));
        assertEquals(256, KnobValues.powerOfTwo(1, 1 << 20).largestUpTo(300));
    }
}
