package io.gossgpu.cpu;

import io.gossgpu.GossException;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A persistent pool of {@code threads − 1} parked workers plus the calling thread. {@link #run} splits
 * an index range into chunks of {@code grain} that every participant claims from a shared counter
 * (dynamic balancing, which matters on a machine shared with other processes), and returns when all
 * chunks are done. Workers spin briefly after each job (the next op usually follows within
 * microseconds), then park. No threads are created per op; nothing is allocated per job.
 */
public final class CpuPool implements AutoCloseable {
    /** A parallel body: process indices {@code [from, to)} as participant {@code worker} (0 = the caller). */
    public interface Body {
        void run(int from, int to, int worker);
    }

    private static final long SPIN_NANOS = 50_000;

    private final int threads;
    private final Thread[] workers;
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicInteger pending = new AtomicInteger();
    private volatile long generation;
    private volatile boolean shutdown;
    private volatile Body body;
    private volatile int total, grain;
    private volatile Throwable failure;
    private volatile boolean ownerParked;

    public CpuPool(int threads) {
        if (threads < 1) throw new GossException("thread count must be at least 1, got " + threads);
        this.threads = threads;
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

    private volatile Thread caller;

    /**
     * Runs {@code body} over {@code [0, total)} in chunks of {@code grain}, on all threads; returns when
     * done, rethrowing the first failure. Small ranges (one chunk) run on the caller alone.
     */
    public void run(int total, int grain, Body body) {
        if (total <= 0) return;
        grain = Math.max(1, grain);
        if (threads == 1 || total <= grain) {
            body.run(0, total, 0);
            return;
        }
        this.body = body;
        this.total = total;
        this.grain = grain;
        this.failure = null;
        this.caller = Thread.currentThread();
        next.set(0);
        pending.set(workers.length);
        generation++; // volatile write publishes the fields above
        for (Thread w : workers) LockSupport.unpark(w);
        work(0);
        long spinUntil = System.nanoTime() + SPIN_NANOS;
        while (pending.get() != 0) {
            if (System.nanoTime() < spinUntil) Thread.onSpinWait();
            else {
                ownerParked = true;
                if (pending.get() != 0) LockSupport.parkNanos(this, 100_000);
                ownerParked = false;
            }
        }
        this.body = null;
        Throwable f = failure;
        if (f != null) {
            if (f instanceof RuntimeException re) throw re;
            if (f instanceof Error er) throw er;
            throw new GossException("cpu worker failed", f);
        }
    }

    /** Chooses a grain giving each thread about {@code chunksPerThread} chunks, at least {@code min}. */
    public int grainFor(int total, int chunksPerThread, int min) {
        return Math.max(min, (total + threads * chunksPerThread - 1) / (threads * chunksPerThread));
    }

    private void work(int worker) {
        Body b = body;
        int t = total, g = grain;
        try {
            for (int from; (from = next.getAndAdd(g)) < t; ) b.run(from, Math.min(t, from + g), worker);
        } catch (Throwable e) {
            if (failure == null) failure = e;
            next.set(t); // stop the others claiming
        }
    }

    private void workerLoop(int id) {
        long seen = 0;
        while (!shutdown) {
            long spinUntil = System.nanoTime() + SPIN_NANOS;
            long g;
            while ((g = generation) == seen && !shutdown) {
                if (System.nanoTime() < spinUntil) Thread.onSpinWait();
                else LockSupport.park(this);
            }
            if (shutdown) return;
            seen = g;
            work(id);
            if (pending.decrementAndGet() == 0) {
                Thread c = caller;
                if (c != null && ownerParked) LockSupport.unpark(c);
            }
        }
    }

    @Override
    public void close() {
        shutdown = true;
        for (Thread w : workers) LockSupport.unpark(w);
    }
}
