package io.gossgpu.cpu.compute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

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

    /** Jobs in shares, mixed with plain ones on the same pool, with uneven chunk times: every index exactly once. */
    @Test
    @Timeout(
            value = 120,
            threadMode =
                    Timeout.ThreadMode
                            .SEPARATE_THREAD) // a claim run twice leaves the done count past the total, and the caller
    // waiting for ever
    void jobsInSharesRunEveryIndexOnce() {
        try (CpuPool pool = new CpuPool(3)) {
            for (int job = 0; job < 3000; job++) {
                int total = 1 + job % 211, grain = 1 + job % 4;
                AtomicIntegerArray hits = new AtomicIntegerArray(total);
                int slow = job % 7;
                CpuPool.Body count = (from, to, w) -> {
                    for (int i = from; i < to; i++) hits.incrementAndGet(i);
                    if (w == slow) spin(2_000); // one participant lags, so the others take from its share
                };
                if (job % 3 == 0) pool.run(total, grain, count);
                else pool.runInShares(total, grain, count);
                for (int i = 0; i < total; i++) assertEquals(1, hits.get(i), "job " + job + " index " + i);
            }
            assertThrows(
                    IllegalArgumentException.class,
                    () -> pool.runInShares(CpuPool.MAX_SHARED_ITEMS, 1, (f, t, w) -> {}));
        }
    }

    /**
     * A job in shares where the worker holds its first piece until the caller has run everything else: the caller
     * streams its own half from index 0 in pieces of a quarter of what it has left, each piece starting where the last
     * ended; then it takes the upper half of what the worker left unclaimed, again and again, so each run it takes ends
     * where the one before began.
     */
    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aParticipantStreamsItsShareThenTakesUpperHalvesOfTheOthers() throws Exception {
        int total = 400, grain = 2;
        try (CpuPool pool = new CpuPool(2)) {
            List<int[]> callerChunks = Collections.synchronizedList(new ArrayList<>());
            CountDownLatch workerClaimed = new CountDownLatch(1);
            AtomicInteger callerItems = new AtomicInteger();
            int[] workerFirst = new int[2];
            pool.runInShares(total, grain, (from, to, w) -> {
                if (w == 0) {
                    callerChunks.add(new int[] {from, to});
                    await(workerClaimed);
                    callerItems.addAndGet(to - from);
                } else if (workerClaimed.getCount() > 0) {
                    workerFirst[0] = from;
                    workerFirst[1] = to;
                    workerClaimed.countDown();
                    while (callerItems.get() < total - (to - from)) Thread.onSpinWait();
                }
            });
            assertEquals(200, workerFirst[0], "the worker starts on its own half");
            assertEquals(250, workerFirst[1], "its first piece: a quarter of its 200");
            int i = 0, at = 0;
            for (; at < 200; i++) {
                int[] c = callerChunks.get(i);
                assertEquals(at, c[0], "the caller's own half, piece " + i);
                assertEquals(Math.min(200 - at, Math.max(grain, (200 - at) / 4)), c[1] - c[0], "piece " + i);
                at = c[1];
            }
            int runEnd = total, left = total - workerFirst[1]; // the worker's unclaimed [250, 400)
            while (left > 0) {
                int start = runEnd - (left - left / 2); // the upper half of what is left
                for (int pos = start; pos < runEnd; i++) {
                    int[] c = callerChunks.get(i);
                    assertEquals(pos, c[0], "a taken run streams from its start, chunk " + i);
                    assertEquals(
                            Math.min(runEnd - pos, Math.max(grain, (runEnd - pos) / 4)), c[1] - c[0], "chunk " + i);
                    pos = c[1];
                }
                left -= runEnd - start;
                runEnd = start;
            }
            assertEquals(callerChunks.size(), i, "nothing else ran on the caller");
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
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
            assertTrue(
                    s.busyNanos()[2] <= 2 * s.wallNanos()[2], "busy " + s.busyNanos()[2] + " wall " + s.wallNanos()[2]);
            // the single-chunk job: busy is its wall time, so the other thread's core is idle the whole time
            assertEquals(s.wallNanos()[0], s.busyNanos()[0]);
            assertEquals(s.wallNanos()[0], s.idleNanos(0));
            assertThrows(IllegalArgumentException.class, () -> pool.tag(CpuPool.TAGS));
        }
    }

    /**
     * After a pause far longer than its spin, the worker is parked: a profiled job it joins (each of its two chunks waits
     * for the other, so both threads run one) counts a wake-up whose delay lies within the job. A pause can in rare cases
     * find the worker not yet parked (descheduled through it), so up to 5 tries; unprofiled jobs count none.
     */
    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aWorkerJoiningAJobFromAParkIsCountedWithItsDelay() throws Exception {
        try (CpuPool pool = new CpuPool(2)) {
            CpuPool.Body bothThreads = (from, to, w) -> {
                // each job's two chunks meet: the caller cannot take the worker's chunk while it waits in its own
                int seen = arrived.incrementAndGet();
                long end = System.nanoTime() + 10_000_000_000L;
                while (arrived.get() < (seen + 1) / 2 * 2 && System.nanoTime() < end) Thread.onSpinWait();
            };
            arrived.set(0);
            Thread.sleep(20);
            pool.run(2, 1, bothThreads); // not profiled
            assertEquals(0, pool.stats().wakes());
            pool.profile(true);
            CpuPool.Stats before = pool.stats();
            long wall = 0;
            int jobs = 0;
            while (jobs < 5 && pool.stats().minus(before).wakes() == 0) {
                Thread.sleep(20);
                long t0 = System.nanoTime();
                pool.run(2, 1, bothThreads);
                wall += System.nanoTime() - t0;
                jobs++;
            }
            CpuPool.Stats s = pool.stats().minus(before);
            assertTrue(s.wakes() >= 1 && s.wakes() <= jobs, "wakes " + s.wakes() + " in " + jobs + " jobs");
            assertTrue(
                    s.wakeNanos() > 0 && s.wakeNanos() <= wall,
                    "wake delays " + s.wakeNanos() + " ns, jobs' wall " + wall + " ns");
        }
    }

    private static final AtomicInteger arrived = new AtomicInteger();

    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) Thread.onSpinWait();
    }

    @Test
    void aFailureInAnyChunkReachesTheCaller() {
        try (CpuPool pool = new CpuPool(2)) {
            GossException e = assertThrows(
                    GossException.class,
                    () -> pool.run(100, 1, (from, to, w) -> {
                        if (from == 57) throw new GossException("boom");
                    }));
            assertEquals("boom", e.getMessage());
            int[] sum = {0};
            pool.run(1, 1, (from, to, w) -> sum[0]++); // still usable
            assertEquals(1, sum[0]);
        }
    }
}
