package io.gossgpu.cpu.compute;

import io.gossgpu.GossException;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class CpuPoolTest {
    @Test
    void everyIndexRunsExactlyOnceAcrossManyJobs() {
        try (CpuPool pool = new CpuPool(3)) {
            for (int job = 0; job < 2000; job++) {
                int total = 1 + job % 97, grain = 1 + job % 5;
                AtomicIntegerArray hits = new AtomicIntegerArray(total);
                pool.run(total, grain, (from, to, w) -> {
                    for (int i = from; i < to; i++) hits.incrementAndGet(i);
                });
                for (int i = 0; i < total; i++) assertEquals(1, hits.get(i), "job " + job + " index " + i);
            }
        }
    }

    @Test
    void aFailureInAnyChunkReachesTheCaller() {
        try (CpuPool pool = new CpuPool(2)) {
            GossException e = assertThrows(GossException.class, () -> pool.run(100, 1, (from, to, w) -> {
                if (from == 57) throw new GossException("boom");
            }));
            assertEquals("boom", e.getMessage());
            int[] sum = {0};
            pool.run(1, 1, (from, to, w) -> sum[0]++); // still usable
            assertEquals(1, sum[0]);
        }
    }
}
