package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import sun.misc.Signal;

/** Ctrl-C as a shell treats it; the tmux-driven .ci/interrupt-test.sh covers the terminal. */
class InterruptTest {
    private final List<Integer> exits = new CopyOnWriteArrayList<>();
    private final Interrupt interrupt = new Interrupt(exits::add);

    @Test
    void ctrlCAtAnIdlePromptQuitsWith130() {
        interrupt.onCtrlC();
        assertEquals(List.of(130), exits);
    }

    @Test
    void ctrlCDuringAReplyStopsItAndASecondOneQuits() {
        AtomicInteger cancels = new AtomicInteger();
        try (var scope = interrupt.duringReply(cancels::incrementAndGet)) {
            interrupt.onCtrlC();
            assertEquals(1, cancels.get());
            assertEquals(List.of(), exits);
            interrupt.onCtrlC();
            assertEquals(List.of(130), exits);
        }
    }

    /** A crash once seen: after a reply, Ctrl-C at the prompt did nothing and the next reply failed. */
    @Test
    void afterAReplyCtrlCAtThePromptQuitsAndTheNextReplyIsStoppableAgain() {
        AtomicInteger cancels = new AtomicInteger();
        try (var scope = interrupt.duringReply(cancels::incrementAndGet)) {
            interrupt.onCtrlC();
        }
        interrupt.onCtrlC();
        assertEquals(List.of(130), exits);
        try (var scope = interrupt.duringReply(cancels::incrementAndGet)) {
            interrupt.onCtrlC();
        }
        assertEquals(2, cancels.get());
        assertEquals(List.of(130), exits);
    }

    @Test
    void aRealSigintReachesTheReplyAgainAndAgain() throws InterruptedException {
        assumeTrue(
                Interrupt.install(interrupt),
                "SIGINT was ignored when this JVM started (e.g. Maven run as a background job of a shell without job control), so no handler can be installed");
        for (int turn = 0; turn < 3; turn++) {
            CountDownLatch cancelled = new CountDownLatch(1);
            try (var scope = interrupt.duringReply(cancelled::countDown)) {
                Signal.raise(new Signal("INT"));
                assertTrue(cancelled.await(10, TimeUnit.SECONDS), "turn " + turn + ": SIGINT did not cancel the reply");
            }
        }
        assertEquals(List.of(), exits);
    }
}
