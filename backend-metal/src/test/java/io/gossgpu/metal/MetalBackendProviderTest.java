package io.gossgpu.metal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.conformance.RequiredBackends;
import org.junit.jupiter.api.Test;

class MetalBackendProviderTest {
    @Test
    void nameAndPriority() {
        MetalBackendProvider p = new MetalBackendProvider();
        assertEquals("metal", p.name());
        assertEquals(100, p.priority());
    }

    @Test
    void withoutMacOsOrTheEmulatorItSaysWhy() {
        Availability a = MetalBackendProvider.availability(false, "Linux");
        assertFalse(a.available());
        assertEquals("not macOS (the emulated device is for tests: set GOSS_METAL_EMULATOR=1)", a.reason());
    }

    @Test
    void knobOutsideThePipelineLimitIsAClearError() {
        GossException e =
                assertThrows(GossException.class, () -> MetalKernel.DENSE.threadgroup.parse("2048", 1024, null));
        assertTrue(
                e.getMessage().contains("GOSS_METAL_DENSE_TG=2048")
                        && e.getMessage().contains("1024"),
                e.getMessage());
        assertThrows(GossException.class, () -> MetalKernel.DENSE.threadgroup.parse("48", 1024, null));
        assertThrows(GossException.class, () -> MetalKernel.DENSE.threadgroup.parse("abc", 1024, null));
        assertEquals(128, MetalKernel.DENSE.threadgroup.parse("128", 1024, null));
    }

    @Test
    void knobIsReadFromTheBackendOptions() {
        RequiredBackends.requireAvailable(new MetalBackendProvider());
        io.gossgpu.backend.BackendOptions none = io.gossgpu.backend.BackendOptions.defaults();
        try (Backend b = new MetalBackendProvider().create(none.with(MetalKernel.ADD.threadgroup, 96))) {
            var x = b.allocate(3, 100);
            float[] v = new float[300];
            for (int i = 0; i < v.length; i++) v[i] = i;
            b.write(x, v);
            b.add(x, x, x);
            float[] r = b.read(x);
            for (int i = 0; i < v.length; i++) assertEquals(2f * i, r[i]);
        }
        // the device layer's SmallOps looks its kernels up when the backend is made (as MoePipeline does): a bad
        // threadgroup knob of add fails there, not at the first add
        GossException e = assertThrows(
                GossException.class,
                () -> new MetalBackendProvider()
                        .create(none.with(MetalKernel.ADD.threadgroup, 4096))
                        .close());
        assertTrue(e.getMessage().contains("GOSS_METAL_ADD_TG=4096"), e.getMessage());
    }
}
