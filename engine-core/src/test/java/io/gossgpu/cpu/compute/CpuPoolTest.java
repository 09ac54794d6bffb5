package io.gossgpu.cpu.compute;

import io.gossgpu.GossException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    /**
     * Guided jobs, mixed with plain ones on the same pool: every index once; a claim takes half of what is left over the
     * threads (at least the minimum grain), so the first chunk of a long job is long and the chunks shrink.
     */
    @Test
    void guidedClaimsCoverEveryIndexOnceInShrinkingChunks() {
        try (CpuPool pool = new CpuPool(3)) {
            for (int job = 0; job < 2000; job++) {
                int total = 1 + job % 211, grain = 1 + job % 4;
                AtomicIntegerArray hits = new AtomicIntegerArray(total);
                CpuPool.Body count = (from, to, w) -> {
                    for (int i = from; i < to; i++) hits.incrementAndGet(i);
                };
                if (job % 3 == 0) pool.run(total, grain, count); else pool.runGuided(total, grain, count);
                for (int i = 0; i < total; i++) assertEquals(1, hits.get(i), "job " + job + " index " + i);
            }
            List<int[]> chunks = Collections.synchronizedList(new ArrayList<>());
            pool.runGuided(600, 2, (from, to, w) -> chunks.add(new int[]{from, to}));
            chunks.sort(Comparator.comparingInt(c -> c[0]));
            assertEquals(100, chunks.get(0)[1] - chunks.get(0)[0], "the first claim: 600 / (2·3)");
            for (int i = 1; i < chunks.size(); i++) {
                int[] c = chunks.get(i);
                assertEquals(chunks.get(i - 1)[1], c[0], "chunks follow one another");
                int left = 600 - c[0];
                assertEquals(Math.min(left, Math.max(2, left / 6)), c[1] - c[0], "chunk at " + c[0]);
            }
            assertEquals(600, chunks.get(chunks.size() - 1)[1]);
        }
    }

    @Test
    void profiledJobsAreCountedUnderTheirTagWithBusyTimeWithinThreadsTimesWall() {
        try (CpuPool pool = new CpuPool(2)) {
            pool.run(100, 1, (from, to, w) -> {}); // not profiled: not counted
            CpuPool.Stats zero = pool.stats();
            assertEquals(0, zero.jobs()[0]);
            pool.profile(true);
            pool.tag(2);
            for (int i = 0; i < 5; i++) pool.run(64, 4, (from, to, w) -> spin(20_000));
            pool.tag(0);
            pool.run(1, 1, (from, to, w) -> spin(200_000)); // one chunk: the caller alone
            pool.profile(false);
            pool.run(64, 4, (from, to, w) -> {});
            CpuPool.Stats s = pool.stats().minus(zero);
            assertEquals(5, s.jobs()[2]);
            assertEquals(1, s.jobs()[0]);
            assertEquals(0, s.jobs()[1] + s.jobs()[3]);
            // 16 chunks of at least 20 us each per job, all inside some thread's busy time
            assertTrue(s.busyNanos()[2] >= 5 * 16 * 20_000, "busy " + s.busyNanos()[2]);
            assertTrue(s.busyNanos()[2] <= 2 * s.wallNanos()[2], "busy " + s.busyNanos()[2] + " wall " + s.wallNanos()[2]);
            // the single-chunk job: busy is its wall time, so the other thread's core is idle the whole time
            assertEquals(s.wallNanos()[0], s.busyNanos()[0]);
            assertEquals(s.wallNanos()[0], s.idleNanos(0));
            assertThrows(IllegalArgumentException.class, () -> pool.tag(CpuPool.TAGS));
        }
    }

    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) Thread.onSpinWait();
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
