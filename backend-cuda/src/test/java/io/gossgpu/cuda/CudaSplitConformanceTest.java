package io.gossgpu.cuda;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.conformance.SplitConformanceKit;
import org.junit.jupiter.api.Nested;

/**
 * The conformance kit on split models ({@link SplitConformanceKit}): Cuda runs everything but the MoE experts of the
 * layers each placement puts on the cpu backend. Skipped, like the plain kit, where the device is absent.
 */
class CudaSplitConformanceTest {
    static BackendProvider gpu() {
        return new CudaBackendProvider();
    }

    static boolean emulated() {
        return CudaDriver.devices().stream().anyMatch(d -> d.name().equals(CudaConformanceTest.FAKE_DRIVER_DEVICE));
    }

    @Nested
    class AllExpertsOnCpu extends SplitConformanceKit {
        @Override protected BackendProvider gpu() { return CudaSplitConformanceTest.gpu(); }
        @Override protected Placement placement() { return Placement.ALL_ON_CPU; }
        @Override protected boolean onEmulatedDevice() { return emulated(); }
        @Override protected boolean runsEmulatedDemo() { return false; } // EveryOtherLayerOnCpu runs it
    }

    @Nested
    class EveryOtherLayerOnCpu extends SplitConformanceKit {
        @Override protected BackendProvider gpu() { return CudaSplitConformanceTest.gpu(); }
        @Override protected Placement placement() { return Placement.EVERY_OTHER; }
        @Override protected boolean onEmulatedDevice() { return emulated(); }
    }

    @Nested
    class LastLayerOnCpu extends SplitConformanceKit {
        @Override protected BackendProvider gpu() { return CudaSplitConformanceTest.gpu(); }
        @Override protected Placement placement() { return Placement.LAST_ONLY; }
        @Override protected boolean onEmulatedDevice() { return emulated(); }
        @Override protected boolean runsEmulatedDemo() { return false; } // EveryOtherLayerOnCpu runs it
    }

    /** Every other layer's experts on the CPU, streamed to the GPU for steps of 2+ tokens (prefill chunks, the op tests). */
    @Nested
    class EveryOtherLayerStreamed extends SplitConformanceKit {
        @Override protected BackendProvider gpu() { return CudaSplitConformanceTest.gpu(); }
        @Override protected Placement placement() { return Placement.EVERY_OTHER; }
        @Override protected int streamMinTokens() { return 2; }
        @Override protected boolean onEmulatedDevice() { return emulated(); }
        @Override protected boolean runsEmulatedDemo() { return false; } // EveryOtherLayerOnCpu runs it
    }
}
