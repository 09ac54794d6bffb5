package io.gossgpu.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.testmodel.TestModelPresets;
import org.junit.jupiter.api.Test;

class BackendsTest {
    @Test
    void referenceIsFoundByServiceLoaderAndByAuto() {
        assertTrue(Backends.providers().stream().anyMatch(p -> p.name().equals("reference")));
        try (Backend b = Backends.open("reference", BackendOptions.defaults())) {
            assertEquals("reference", b.name());
        }
        try (Backend b = Backends.open("auto", BackendOptions.defaults())) { // the only provider in engine-core alone
            assertTrue(Backends.safeAvailability(Backends.provider(b.name())).available());
        }
    }

    @Test
    void unknownNameListsWhatIsAvailable() {
        GossException e = assertThrows(GossException.class, () -> Backends.open("vulkan", BackendOptions.defaults()));
        assertTrue(e.getMessage().contains("unknown backend 'vulkan'"), e.getMessage());
        assertTrue(e.getMessage().contains("available: ") && e.getMessage().contains("reference"), e.getMessage());
    }

    @Test
    void kvCacheCostFollowsTheFormula() {
        ModelConfig c = TestModelPresets.tiny(); // 3 layers, kv_dim 32, window 5: layers 0 and 2 slide
        KvCacheSpec s = new KvCacheSpec(c, 100);
        assertEquals(5, s.slots(0));
        assertEquals(100, s.slots(1));
        assertEquals(2L * 32 * (5 + 100 + 5) * 4, s.bytes());
        assertEquals(3, new KvCacheSpec(c, 3).slots(2)); // min(window, ctx)
        // gpt-oss-20b at 131072: 12 full layers × 131072 + 12 sliding × 128, kv_dim 512, K and V, 4 bytes
        KvCacheSpec big = new KvCacheSpec(ModelConfig.gptOss20b(), 131072);
        assertEquals(2L * 512 * 4 * (12L * 131072 + 12L * 128), big.bytes());
        assertTrue(big.describe().contains("GiB"), big.describe());
    }

    @Test
    void rollbackSlackWidensTheSlidingRingsOnly() {
        ModelConfig c = TestModelPresets.tiny(); // window 5 on layers 0 and 2
        KvCacheSpec s = new KvCacheSpec(c, 100, 3);
        assertEquals(8, s.slots(0));
        assertEquals(100, s.slots(1));
        assertEquals(8, s.slots(2));
        assertEquals(2L * 32 * (8 + 100 + 8) * 4, s.bytes());
        assertEquals(6, new KvCacheSpec(c, 6, 3).slots(0)); // min(ctx, window + R)
        assertEquals(new KvCacheSpec(c, 100).bytes(), new KvCacheSpec(c, 100, 0).bytes());
        assertTrue(s.describe().contains("window 5 + rollback 3"), s.describe());
        assertThrows(GossException.class, () -> new KvCacheSpec(c, 100, -1));
    }

    @Test
    void canResumeIsTheWindowConditionOfTheJavadoc() {
        ModelConfig c = TestModelPresets.tiny(); // W = 5
        KvCacheSpec s = new KvCacheSpec(c, 100, 3); // S = 8
        // after positions 0..19: P ≥ W − 1 may go back N − P ≤ R + 1 = 4
        assertTrue(s.canResume(20, 20));
        assertTrue(s.canResume(20, 16));
        assertFalse(s.canResume(20, 15));
        assertTrue(s.canResume(20, 0));
        assertFalse(s.canResume(20, 21));
        // early positions read from 0: possible only while nothing was overwritten (N ≤ S)
        assertTrue(s.canResume(8, 2));
        assertFalse(s.canResume(9, 2));
        // no slack: one step back only
        KvCacheSpec none = new KvCacheSpec(c, 100);
        assertTrue(none.canResume(20, 19));
        assertFalse(none.canResume(20, 18));
        // a ring as long as the context never loses a position
        KvCacheSpec whole = new KvCacheSpec(c, 30, 25);
        assertTrue(whole.canResume(30, 1));
    }

    @Test
    void gptOss20bPaysFourKibPerSlackPositionPerSlidingLayer() {
        ModelConfig c = ModelConfig.gptOss20b(); // 24 layers, 12 sliding (window 128), kv_dim 512, F32
        long before = new KvCacheSpec(c, 8192, 0).bytes(),
                after = new KvCacheSpec(c, 8192, KvCacheSpec.DEFAULT_SWA_ROLLBACK).bytes();
        assertEquals(2L * 512 * 4 * (12L * 8192 + 12L * 128), before); // 390 MiB
        assertEquals(12L * KvCacheSpec.DEFAULT_SWA_ROLLBACK * 2 * 512 * 4, after - before); // 96 MiB for R = 2048
    }
}
