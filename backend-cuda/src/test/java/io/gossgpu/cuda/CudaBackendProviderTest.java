package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backends;
import org.junit.jupiter.api.Test;

/** The cuda backend is found by name; it is available exactly when the driver, a device and the kernels are. */
class CudaBackendProviderTest {
    @Test
    void isListedAndAvailableExactlyWhenTheDriverAndKernelsAre() {
        CudaBackendProvider p = new CudaBackendProvider();
        assertEquals("cuda", p.name());
        assertEquals(100, p.priority()); // above opencl and cpu: auto picks cuda where it is available
        assertTrue(Backends.providers().stream().anyMatch(x -> x.name().equals("cuda")));
        Availability a = p.availability();
        CudaDriver.Availability driver = CudaDriver.backendAvailability();
        assertEquals(driver.available(), a.available());
        if (!driver.available()) {
            assertEquals(driver.reason(), a.reason());
            GossException e = assertThrows(
                    GossException.class, () -> Backends.open("cuda", io.gossgpu.backend.BackendOptions.defaults()));
            assertTrue(e.getMessage().contains(a.reason()), e.getMessage());
            GossException c =
                    assertThrows(GossException.class, () -> p.create(io.gossgpu.backend.BackendOptions.defaults()));
            assertTrue(c.getMessage().startsWith("cuda backend unavailable: "), c.getMessage());
        } else {
            assertTrue(a.reason().contains("CUDA device"), a.reason());
        }
    }

    @Test
    void countKnobsAreValidatedWithTheirNameValueAndRange() {
        assertEquals("GOSS_CUDA_MOE_PREFILL_MIN_T", CudaKnobs.MOE_PREFILL_MIN_T.envName());
        assertEquals("GOSS_CUDA_ATTENTION_PREFILL_MIN_T", CudaKnobs.ATTENTION_PREFILL_MIN_T.envName());
        assertEquals("GOSS_CUDA_ATTENTION_SPLITS", CudaKnobs.ATTENTION_SPLITS.envName());
        assertEquals(0, CudaKnobs.ATTENTION_SPLITS.parse("0", Integer.MAX_VALUE, null));
        for (String bad : new String[] {"-1", "1025", "x"}) {
            GossException e = assertThrows(
                    GossException.class, () -> CudaKnobs.ATTENTION_SPLITS.parse(bad, Integer.MAX_VALUE, null));
            assertTrue(
                    e.getMessage().contains("GOSS_CUDA_ATTENTION_SPLITS=" + bad)
                            && e.getMessage().contains("1024"),
                    e.getMessage());
        }
        GossException e = assertThrows(
                GossException.class, () -> CudaKnobs.MOE_PREFILL_MIN_T.parse("0", Integer.MAX_VALUE, null));
        assertTrue(e.getMessage().contains("GOSS_CUDA_MOE_PREFILL_MIN_T=0"), e.getMessage());
    }

    @Test
    void blockKnobsAreValidatedWithTheirNameValueAndRange() {
        assertEquals(64, CudaKnobs.ATTENTION.parse("64", 1024, null));
        assertEquals(1024, CudaKnobs.ATTENTION.parse(" 1024 ", 1024, null));
        for (String bad : new String[] {"0", "16", "48", "2048", "abc", "-32"}) {
            GossException e = assertThrows(GossException.class, () -> CudaKnobs.ATTENTION.parse(bad, 1024, null));
            assertTrue(e.getMessage().contains("GOSS_CUDA_ATTENTION_BLOCK=" + bad), e.getMessage());
            assertTrue(
                    e.getMessage().contains("threads per block must be a multiple of 32 from 32 to 1024"),
                    e.getMessage());
        }
        assertEquals("GOSS_CUDA_MOE_BLOCK", CudaKnobs.MOE.envName());
        assertEquals("goss.cuda.moe.block", CudaKnobs.MOE.propertyName());
        io.gossgpu.backend.BackendOptions none = io.gossgpu.backend.BackendOptions.defaults();
        assertEquals(96, CudaKnobs.ARGMAX.value(none.with(CudaKnobs.ARGMAX, 96)));
        GossException e =
                assertThrows(GossException.class, () -> CudaKnobs.ARGMAX.value(none.with(CudaKnobs.ARGMAX, 100)));
        assertTrue(e.getMessage().contains("GOSS_CUDA_ARGMAX_BLOCK=100"), e.getMessage());
        assertEquals(1, CudaKnobs.GRAPH.value(none));
        GossException g =
                assertThrows(GossException.class, () -> CudaKnobs.GRAPH.value(none.with("GOSS_CUDA_GRAPH", "yes")));
        assertEquals("invalid GOSS_CUDA_GRAPH=yes: the graph switch must be one of 0, 1", g.getMessage());
        assertEquals(0, CudaKnobs.GRAPH.value(none.with("GOSS_CUDA_GRAPH", " 0 ")));
    }
}
