package io.gossgpu.conformance;

import io.gossgpu.backend.BackendProvider;
import org.junit.jupiter.api.Nested;

/**
 * The split-model kit ({@link SplitConformanceKit}) in every placement it is run in, for one GPU backend: a backend's
 * test extends this and names its provider and whether its device is emulated. The GPU runs everything but the MoE
 * experts of the layers each placement puts on the cpu backend; skipped, like the plain kit, where the device is absent.
 */
public abstract class SplitConformanceSuite {
    /** The GPU backend's provider. */
    protected abstract BackendProvider gpu();

    /** Whether the device is an emulator (the kit's tolerances and its demo-model check depend on it). */
    protected abstract boolean emulated();

    /** The kit with this suite's backend and {@code placement}. */
    abstract class On extends SplitConformanceKit {
        @Override
        protected BackendProvider gpu() {
            return SplitConformanceSuite.this.gpu();
        }

        @Override
        protected boolean onEmulatedDevice() {
            return emulated();
        }

        @Override
        protected boolean runsEmulatedDemo() {
            return false;
        } // EveryOtherLayerOnCpu runs it

        @Override
        protected boolean runsEmulatedGenerations() {
            return false;
        } // and these
    }

    @Nested
    class AllExpertsOnCpu extends On {
        @Override
        protected Placement placement() {
            return Placement.ALL_ON_CPU;
        }
    }

    @Nested
    class EveryOtherLayerOnCpu extends On {
        @Override
        protected Placement placement() {
            return Placement.EVERY_OTHER;
        }

        @Override
        protected boolean runsEmulatedDemo() {
            return true;
        }

        @Override
        protected boolean runsEmulatedGenerations() {
            return true;
        }
    }

    @Nested
    class LastLayerOnCpu extends On {
        @Override
        protected Placement placement() {
            return Placement.LAST_ONLY;
        }
    }

    /** Every other layer's experts on the CPU, streamed to the GPU for steps of 2+ tokens (prefill chunks, the op tests). */
    @Nested
    class EveryOtherLayerStreamed extends On {
        @Override
        protected Placement placement() {
            return Placement.EVERY_OTHER;
        }

        @Override
        protected int streamMinTokens() {
            return 2;
        }
    }
}
