package io.gossgpu.cpu.compute;

import io.gossgpu.GossException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * A persistent pool of {@code threads − 1} parked workers plus the calling thread. {@link #run} splits
 * an index range into chunks of {@code grain} that every participant claims from a shared ticket, and
 * returns when every chunk is <em>done</em> — not when every worker has checked in: on a machine shared
 * with other processes a descheduled worker that claimed nothing never delays the caller, which then
 * simply does the work itself. The ticket holds the job's generation beside the next index, so a late
 * worker can never claim a chunk of a later job. Workers spin briefly after each job (the next op
 * usually follows within microseconds), then park. No threads are created per op; nothing is allocated
 * per job.
 *
 * <p>With {@link #profile} on ({@code bench --op-times}), each job's wall time and each participant's time inside the
 * body are added up per {@linkplain #tag tag}: threads × wall − busy is core time that read nothing (workers waking,
 * the wait for the last chunk, a job of one chunk on the caller alone). Off, it costs one field read per chunk. It also
 * counts the jobs a worker joined from a park rather than from its spin, and how long after the job opened it got there:
 * what a wake-up costs depends on the machine (on a 2-vCPU VM: a median of 85-170 µs, against a microsecond
 * from the spin).
 */
public final class CpuPool implements AutoCloseable {
    /** A parallel body: process indices {@code [from, to)} as participant {@code worker} (0 = the caller). */
    public interface Body {
        void run(int from, int to, int worker);
    }

    private static final long SPIN_NANOS = 50_000;

    private final int threads;
    private final Thread[] workers;
    /** (generation << 32) | next index to claim. */
    private final AtomicLong ticket = new AtomicLong();

    private final AtomicInteger done = new AtomicInteger();
    private volatile int generation;
    private volatile boolean shutdown;
    private volatile Body body;
    private volatile int total, grain;
    /** The current job is split in shares ({@link #runInShares}), not claimed from {@link #ticket}. */
    private volatile boolean inShares;
    /**
     * Per participant, at {@code participant · SHARE_PAD}, the unclaimed part {@code [lo, hi)} of its share of a
     * {@link #runInShares} job, tagged with the job's generation: {@code gen:24 | lo:20 | hi:20}. The tag makes a late
     * participant's claim on another job's share fail (it would take 2^24 jobs to wrap).
     */
    private final AtomicLongArray shares;

    private static final int SHARE_PAD = 8, ITEM_BITS = 20;
    private static final long ITEM_MASK = (1L << ITEM_BITS) - 1, GEN_BITS = ((1L << 24) - 1) << (2 * ITEM_BITS);
    /** {@link #runInShares} takes fewer items than this. */
    public static final int MAX_SHARED_ITEMS = 1 << ITEM_BITS;

    private volatile Throwable failure;
    private volatile Thread caller;
    private volatile boolean callerParked;

    /** Tags a job can carry ({@link #tag}), each counted on its own when profiling. */
    public static final int TAGS = 4;
    /** Per participant, busy nanoseconds per tag of the current job, a cache line apart (written by that thread only). */
    private static final int PAD = 16;

    private final long[] busy;
    /**
     * Per worker, a cache line apart (written by that worker only, read by {@link #stats}): the jobs it joined from a park
     * while profiling, and the nanoseconds from their opening ({@link #openedAt}) to its waking.
     */
    private final long[] wakes, wakeNanos;
    /** When the current job was opened (set while profiling). */
    private volatile long openedAt;

    private final long[] jobs = new long[TAGS], wall = new long[TAGS], busyDone = new long[TAGS];
    private boolean profiling;
    private int tag;

    public CpuPool(int threads) {
        if (threads < 1) throw new GossException("thread count must be at least 1, got " + threads);
        this.threads = threads;
        busy = new long[threads * PAD];
        wakes = new long[threads * PAD];
        wakeNanos = new long[threads * PAD];
        shares = new AtomicLongArray(threads * SHARE_PAD);
        workers = new Thread[threads - 1];
        for (int i = 0; i < workers.length; i++) {
            int id = i + 1;
            Thread t = new Thread(() -> workerLoop(id), "goss-cpu-" + id);
            t.setDaemon(true);
            workers[i] = t;
            t.start();
        }
    }

    public int threads() {
        return threads;
    }

    /**
     * Runs {@code body} over {@code [0, total)} in chunks of {@code grain}, on all threads; returns when
     * done, rethrowing the first failure. Small ranges (one chunk) run on the caller alone.
     */
    public void run(int total, int grain, Body body) {
        run(total, grain, false, body);
    }

    /**
     * As {@link #run}, for bodies that stream memory in index order: participant {@code p} owns the contiguous share
     * {@code [p·total/threads, (p+1)·total/threads)} and claims it from its start in pieces of a quarter of what it has
     * left (at least {@code minGrain}), so its claims follow one another in memory and the hardware prefetchers see one
     * stream. A participant whose share runs out takes the upper half of the largest share still unclaimed, so a
     * descheduled thread still never holds up the job. For bodies whose result per index does not depend on where a
     * chunk starts; {@code total < }{@link #MAX_SHARED_ITEMS}.
     *
     * <p>Why not one shared counter ({@link #run}'s claims, or guided self-scheduling off it): then a thread's
     * successive claims lie apart, each one a new stream. In a C harness of the one-token mx4 kernel on a Zen 4, jobs
     * of 8.8 MB read 83 % of a fast (55-70 GB/s) C probe with guided claims off one counter, 89 % with each thread on
     * its own half (in quarter pieces or in one call). The engine's op tables did not show the difference beyond
     * their noise.
     */
    public void runInShares(int total, int minGrain, Body body) {
        if (total >= MAX_SHARED_ITEMS)
            throw new IllegalArgumentException(
                    "runInShares takes fewer than " + MAX_SHARED_ITEMS + " items, got " + total);
        run(total, minGrain, true, body);
    }

    private void run(int total, int grain, boolean inShares, Body body) {
        if (total <= 0) return;
        grain = Math.max(1, grain);
        boolean timed = profiling;
        long t0 = timed ? System.nanoTime() : 0;
        if (threads == 1 || total <= grain) {
            body.run(0, total, 0);
            if (timed) {
                long wallNanos = System.nanoTime() - t0;
                count(wallNanos, wallNanos);
            }
            return;
        }
        int gen = generation + 1;
        // close claims first: a late worker of the previous job fails its CAS from here on, whatever fields it reads
        ticket.set(((long) gen << 32) | Integer.MAX_VALUE);
        this.body = body;
        this.total = total;
        this.grain = grain;
        this.inShares = inShares;
        this.failure = null;
        this.caller = Thread.currentThread();
        done.set(0);
        if (inShares) {
            long tag = shareTag(gen);
            for (int p = 0; p < threads; p++)
                shares.set(p * SHARE_PAD, share(tag, (int) ((long) p * total / threads), (int)
                        ((long) (p + 1) * total / threads)));
        } else ticket.set((long) gen << 32); // opens the job; publishes the fields above
        if (timed) openedAt = System.nanoTime();
        generation = gen;
        for (Thread w : workers) LockSupport.unpark(w);
        participate(0, gen);
        int n = total;
        long spinUntil = System.nanoTime() + SPIN_NANOS;
        while (done.get() != n) {
            if (System.nanoTime() < spinUntil) Thread.onSpinWait();
            else {
                callerParked = true;
                if (done.get() != n) LockSupport.parkNanos(this, 50_000);
                callerParked = false;
            }
        }
        this.body = null;
        if (timed) {
            long b = 0;
            for (int w = 0; w < threads; w++) {
                b += busy[w * PAD];
                busy[w * PAD] = 0;
            }
            count(System.nanoTime() - t0, b);
        }
        Throwable f = failure;
        if (f != null) {
            if (f instanceof RuntimeException re) throw re;
            if (f instanceof Error er) throw er;
            throw new GossException("cpu worker failed", f);
        }
    }

    /** Adds a finished job of {@code wallNanos} that kept the threads busy {@code busyNanos} in all, to the current tag. */
    private void count(long wallNanos, long busyNanos) {
        jobs[tag]++;
        wall[tag] += wallNanos;
        busyDone[tag] += busyNanos;
    }

    /**
     * Turns the per-job timing on or off (off by default; the caller's thread only, between jobs). Counts from the
     * last time it was on go on from where they were.
     */
    public void profile(boolean on) {
        profiling = on;
    }

    /** The tag ({@code 0 ≤ tag < TAGS}) the following jobs are counted under, until changed (0 to begin with). */
    public void tag(int tag) {
        if (tag < 0 || tag >= TAGS) throw new IllegalArgumentException("tag " + tag);
        this.tag = tag;
    }

    /**
     * What the profiled jobs took so far, per tag: how many, their wall time, and the time the threads spent in their
     * bodies; {@code threads} to turn wall time into core time. Over all tags: {@code wakes}, how many times a worker
     * joined a job from a park, and {@code wakeNanos}, their delays from the job's opening.
     */
    public record Stats(int threads, long[] jobs, long[] wallNanos, long[] busyNanos, long wakes, long wakeNanos) {
        /** Core time in jobs of {@code tag} that read nothing: threads × wall − busy. */
        public long idleNanos(int tag) {
            return Math.max(0, threads * wallNanos[tag] - busyNanos[tag]);
        }

        /** These counts less {@code earlier}'s (what happened in between). */
        public Stats minus(Stats earlier) {
            long[] j = jobs.clone(), w = wallNanos.clone(), b = busyNanos.clone();
            for (int t = 0; t < TAGS; t++) {
                j[t] -= earlier.jobs[t];
                w[t] -= earlier.wallNanos[t];
                b[t] -= earlier.busyNanos[t];
            }
            return new Stats(threads, j, w, b, wakes - earlier.wakes, wakeNanos - earlier.wakeNanos);
        }
    }

    /**
     * A copy of the counts so far (call on the jobs' caller's thread, between jobs). A worker waking as this is called
     * may be counted by the next call instead.
     */
    public Stats stats() {
        long n = 0, nanos = 0;
        for (int w = 1; w < threads; w++) {
            n += wakes[w * PAD];
            nanos += wakeNanos[w * PAD];
        }
        return new Stats(threads, jobs.clone(), wall.clone(), busyDone.clone(), n, nanos);
    }

    /** Chooses a grain giving each thread about {@code chunksPerThread} chunks, at least {@code min}. */
    public int grainFor(int total, int chunksPerThread, int min) {
        return Math.max(min, (total + threads * chunksPerThread - 1) / (threads * chunksPerThread));
    }

    /** Runs chunks of job {@code gen}, as its kind claims them, until none is left (or a later job has started). */
    private void participate(int worker, int gen) {
        if (inShares) workShares(worker, gen);
        else work(worker, gen);
    }

    /** {@link #participate} for a job claimed from {@link #ticket}. */
    private void work(int worker, int gen) {
        while (true) {
            long v = ticket.get();
            if ((int) (v >>> 32) != gen) return;
            int from = (int) v;
            int t = total, g = grain;
            if (from >= t) return;
            int end = Math.min(t, from + g);
            if (!ticket.compareAndSet(v, v + g)) continue;
            runClaimed(from, end, worker, t);
        }
    }

    /** {@link #participate} for a job in shares: this participant's share in shrinking pieces, then what it can take. */
    private void workShares(int worker, int gen) {
        long tag = shareTag(gen);
        int me = worker * SHARE_PAD;
        while (true) {
            long v = shares.get(me);
            if ((v & GEN_BITS) != tag) return;
            int lo = lo(v), hi = hi(v);
            if (lo < hi) {
                int end = Math.min(hi, lo + Math.max(grain, (hi - lo) / 4));
                if (shares.compareAndSet(me, v, share(tag, end, hi))) runClaimed(lo, end, worker, total);
            } else if (!takeHalf(worker, tag)) return;
        }
    }

    /**
     * Moves the upper half of the largest unclaimed share of another participant into {@code worker}'s (empty) share;
     * false when there is none left (or a later job has started).
     */
    private boolean takeHalf(int worker, long tag) {
        while (true) {
            int victim = -1, most = 0;
            long seen = 0;
            for (int p = 0; p < threads; p++) {
                if (p == worker) continue;
                long v = shares.get(p * SHARE_PAD);
                if ((v & GEN_BITS) != tag) return false;
                if (hi(v) - lo(v) > most) {
                    most = hi(v) - lo(v);
                    victim = p;
                    seen = v;
                }
            }
            if (victim < 0) return false;
            int lo = lo(seen), hi = hi(seen), mid = lo + most / 2;
            // nobody else writes an empty share, so the plain set cannot lose a claim
            if (shares.compareAndSet(victim * SHARE_PAD, seen, share(tag, lo, mid))) {
                shares.set(worker * SHARE_PAD, share(tag, mid, hi));
                return true;
            }
        }
    }

    private static long shareTag(int gen) {
        return ((long) gen << (2 * ITEM_BITS)) & GEN_BITS;
    }

    private static long share(long tag, int lo, int hi) {
        return tag | (long) lo << ITEM_BITS | hi;
    }

    private static int lo(long share) {
        return (int) (share >>> ITEM_BITS & ITEM_MASK);
    }

    private static int hi(long share) {
        return (int) (share & ITEM_MASK);
    }

    /** Runs the claimed chunk {@code [from, end)} of a job of {@code total} items and counts it done. */
    private void runClaimed(int from, int end, int worker, int total) {
        // a successful claim means the job is still running, so body is its own
        try {
            if (failure == null) {
                if (profiling) {
                    long c0 = System.nanoTime();
                    body.run(from, end, worker);
                    busy[worker * PAD] += System.nanoTime() - c0; // published to the caller by done's increment
                } else body.run(from, end, worker);
            }
        } catch (Throwable e) {
            if (failure == null) failure = e;
        }
        if (done.addAndGet(end - from) == total && worker != 0) {
            Thread c = caller;
            if (c != null && callerParked) LockSupport.unpark(c);
        }
    }

    private void workerLoop(int id) {
        int seen = 0;
        while (!shutdown) {
            long spinUntil = System.nanoTime() + SPIN_NANOS;
            int g;
            boolean parked = false;
            while ((g = generation) == seen && !shutdown) {
                if (System.nanoTime() < spinUntil) Thread.onSpinWait();
                else {
                    parked = true;
                    LockSupport.park(this);
                }
            }
            if (shutdown) return;
            // profiling and openedAt were written before the job's generation, which this thread has just read
            if (parked && profiling) {
                wakes[id * PAD]++;
                wakeNanos[id * PAD] += System.nanoTime() - openedAt;
            }
            seen = g;
            participate(id, g);
        }
    }

    @Override
    public void close() {
        shutdown = true;
        for (Thread w : workers) LockSupport.unpark(w);
    }
}
