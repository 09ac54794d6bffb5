package io.gossgpu.cpu.compute;

import io.gossgpu.GossException;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
    private volatile int total, grain, chunks;
    private volatile Throwable failure;
    private volatile Thread caller;
    private volatile boolean callerParked;

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
        int gen = generation + 1;
        // close claims first: a late worker of the previous job fails its CAS from here on, whatever fields it reads
        ticket.set(((long) gen << 32) | Integer.MAX_VALUE);
        this.body = body;
        this.total = total;
        this.grain = grain;
        this.chunks = (total + grain - 1) / grain;
        this.failure = null;
        this.caller = Thread.currentThread();
        done.set(0);
        ticket.set((long) gen << 32); // opens the job; publishes the fields above
        generation = gen;
        for (Thread w : workers) LockSupport.unpark(w);
        work(0, gen);
        int n = chunks;
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

    /** Claims and runs chunks of job {@code gen} until none is left (or a later job has started). */
    private void work(int worker, int gen) {
        while (true) {
            long v = ticket.get();
            if ((int) (v >>> 32) != gen) return;
            int from = (int) v;
            int t = total, g = grain;
            if (from >= t) return;
            if (!ticket.compareAndSet(v, v + g)) continue;
            // a successful claim means job gen is still running, so body/total/grain are its own
            try {
                if (failure == null) body.run(from, Math.min(t, from + g), worker);
            } catch (Throwable e) {
                if (failure == null) failure = e;
            }
            if (done.incrementAndGet() == chunks && worker != 0) {
                Thread c = caller;
                if (c != null && callerParked) LockSupport.unpark(c);
            }
        }
    }

    private void workerLoop(int id) {
        int seen = 0;
        while (!shutdown) {
            long spinUntil = System.nanoTime() + SPIN_NANOS;
            int g;
            while ((g = generation) == seen && !shutdown) {
                if (System.nanoTime() < spinUntil) Thread.onSpinWait();
                else LockSupport.park(this);
            }
            if (shutdown) return;
            seen = g;
            work(id, g);
        }
    }

    @Override
    public void close() {
        shutdown = true;
        for (Thread w : workers) LockSupport.unpark(w);
    }
}
