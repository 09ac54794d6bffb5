package io.gossgpu.backend;

import io.gossgpu.GossException;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.testmodel.TestModelPresets;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BackendsTest {
    @Test
    void referenceIsFoundByServiceLoaderAndByAuto() {
        assertTrue(Backends.providers().stream().anyMatch(p -> p.name().equals("reference")));
        try (Backend b = Backends.open("reference")) {
            assertEquals("reference", b.name());
        }
        try (Backend b = Backends.open("auto")) { // the only provider in engine-core alone
            assertTrue(Backends.safeAvailability(Backends.provider(b.name())).available());
        }
    }

    @Test
    void unknownNameListsWhatIsAvailable() {
        GossException e = assertThrows(GossException.class, () -> Backends.open("vulkan"));
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
}
