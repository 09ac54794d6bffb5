package io.gossgpu.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/** The kit's own guards: unavailable backends are skipped with their reason; differences are caught. */
class ConformanceKitSelfTest {
    @Test
    void unavailableBackendIsSkippedWithItsReason() {
        BackendProvider absent = new BackendProvider() {
            public String name() {
                return "absent";
            }

            public int priority() {
                return 1;
            }

            public Availability availability() {
                return Availability.no("no such device in this machine");
            }

            public Backend create(BackendOptions o) {
                throw new AssertionError("must not be created");
            }
        };
        TestAbortedException e =
                assertThrows(TestAbortedException.class, () -> BackendConformanceKit.requireAvailable(absent));
        assertTrue(e.getMessage().contains("no such device in this machine"), e.getMessage());
    }

    /** GOSS_REQUIRE_<NAME>=1 (CI, where the device or its emulator is installed): an unavailable backend fails, never skips. */
    @Test
    void unavailableRequiredBackendFails() {
        Availability no = Availability.no("emulator library failed to load");
        AssertionFailedError e = assertThrows(
                AssertionFailedError.class,
                () -> RequiredBackends.requireAvailable("metal", no, Map.of("GOSS_REQUIRE_METAL", "1")));
        assertTrue(
                e.getMessage()
                        .equals(
                                "GOSS_REQUIRE_METAL=1 but backend 'metal' is unavailable: emulator library failed to load"),
                e.getMessage());
        // another backend's switch, or a value other than 1, leaves the skip
        assertThrows(
                TestAbortedException.class,
                () -> RequiredBackends.requireAvailable("metal", no, Map.of("GOSS_REQUIRE_CUDA", "1")));
        assertThrows(
                TestAbortedException.class,
                () -> RequiredBackends.requireAvailable("metal", no, Map.of("GOSS_REQUIRE_METAL", "0")));
        RequiredBackends.requireAvailable("metal", Availability.yes("emulated"), Map.of("GOSS_REQUIRE_METAL", "1"));
        assertEquals("GOSS_REQUIRE_OPENCL", RequiredBackends.variable("opencl"));
    }

    @Test
    void assertCloseIsRelativeToTheRowScale() {
        float[] ref = {100f, 1f, 0.001f, 0.001f};
        BackendConformanceKit.assertClose("ok", ref, new float[] {100f, 1.005f, 0.001f, 0.00100001f}, 2, 2, 1e-4);
        assertThrows(
                AssertionFailedError.class,
                () -> BackendConformanceKit.assertClose(
                        "bad", ref, new float[] {100f, 1f, 0.001f, 0.0011f}, 2, 2, 1e-4));
    }

    /** The kit on a backend whose MLP norm of layer 1 is 1% off in one value: the per-op and model tests fail. */
    @Test
    void theKitCatchesABrokenOp() {
        BackendProvider broken = new BackendProvider() {
            public String name() {
                return "reference";
            }

            public int priority() {
                return 0;
            }

            public Availability availability() {
                return Availability.yes("test");
            }

            public Backend create(BackendOptions o) {
                return new io.gossgpu.conformance.BrokenNormBackend();
            }
        };
        BackendConformanceKit kit = new BackendConformanceKit() {
            protected BackendProvider provider() {
                return broken;
            }
        };
        kit.setUpBackends();
        try {
            kit.dense("odd", 3); // untouched op passes
            assertThrows(AssertionFailedError.class, () -> kit.rmsNorm("tiny", 3));
            assertThrows(AssertionFailedError.class, kit::wholeModelPrefillLogits);
        } finally {
            kit.tearDown();
        }
    }

    /** The kit on a backend that keeps every cache in F32 whatever its type: the per-type attention tests fail. */
    @Test
    void theKitCatchesACacheThatIgnoresItsType() {
        BackendProvider untyped = new BackendProvider() {
            public String name() {
                return "reference";
            }

            public int priority() {
                return 0;
            }

            public Availability availability() {
                return Availability.yes("test");
            }

            public Backend create(BackendOptions o) {
                return new io.gossgpu.backend.ForwardingBackend(new io.gossgpu.reference.ReferenceBackend()) {
                    @Override
                    public io.gossgpu.backend.KvCache createKvCache(io.gossgpu.backend.KvCacheSpec spec) {
                        return super.createKvCache(spec.withType(io.gossgpu.backend.KvType.F32));
                    }
                };
            }
        };
        BackendConformanceKit kit = new BackendConformanceKit() {
            protected BackendProvider provider() {
                return untyped;
            }
        };
        kit.setUpBackends();
        try {
            kit.attentionWithKvType("tiny", 17, io.gossgpu.backend.KvType.F32); // F32 is what it stores: passes
            for (var t : new io.gossgpu.backend.KvType[] {
                io.gossgpu.backend.KvType.F16, io.gossgpu.backend.KvType.BF16, io.gossgpu.backend.KvType.Q8_0
            }) {
                assertThrows(AssertionFailedError.class, () -> kit.attentionWithKvType("tiny", 17, t), t.name());
                assertThrows(AssertionFailedError.class, () -> kit.wholeModelLogitsWithKvType(t), t.name());
            }
        } finally {
            kit.tearDown();
        }
    }
}
