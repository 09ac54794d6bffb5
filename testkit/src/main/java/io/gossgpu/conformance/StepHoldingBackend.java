package io.gossgpu.conformance;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.ForwardingBackend;
import io.gossgpu.backend.LoadedWeights;
import java.util.EnumSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A backend that stops its {@code heldStep}-th step in the middle (before the step's first attention op, where the KV
 * cache and the weights are in use) until {@link #closer} waits for something or has ended, then lets the step go on.
 * It records whether {@link #close} came while a step was under way. For the test that closes an engine mid-step
 * ({@link BackendConformanceKit}): an engine that frees memory without waiting for the step makes the rest of the
 * held step read freed memory.
 */
final class StepHoldingBackend extends ForwardingBackend {
    private static final EnumSet<Thread.State> STOPPED =
            EnumSet.of(Thread.State.WAITING, Thread.State.TIMED_WAITING, Thread.State.BLOCKED, Thread.State.TERMINATED);

    private final int heldStep;
    /** Counted down when the held step reaches its first attention op. */
    final CountDownLatch reached = new CountDownLatch(1);
    /** The thread whose waiting releases the held step (set before it starts). */
    volatile Thread closer;

    private int steps;
    private boolean held;
    private volatile boolean inStep;
    volatile boolean closedDuringStep, closed;

    StepHoldingBackend(Backend delegate, int heldStep) {
        super(delegate);
        this.heldStep = heldStep;
    }

    @Override
    public void beginStep(Batch batch) {
        steps++;
        inStep = true;
        super.beginStep(batch);
    }

    @Override
    public void attention(
            LoadedWeights w, int layer, DeviceTensor q, DeviceTensor k, DeviceTensor v, Batch batch, DeviceTensor out) {
        if (steps == heldStep && !held) {
            held = true;
            reached.countDown();
            awaitCloserStopped();
        }
        super.attention(w, layer, q, k, v, batch, out);
    }

    private void awaitCloserStopped() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            Thread t = closer;
            if (t != null && t.getState() != Thread.State.NEW && STOPPED.contains(t.getState())) return;
            Thread.onSpinWait();
        }
        throw new AssertionError("the closing thread neither waited nor ended within 60 s");
    }

    @Override
    public void endStep() {
        try {
            super.endStep();
        } finally {
            inStep = false;
        }
    }

    @Override
    public void close() {
        if (inStep) closedDuringStep = true;
        closed = true;
        super.close();
    }
}
