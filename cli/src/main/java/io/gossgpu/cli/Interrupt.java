package io.gossgpu.cli;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Ctrl-C as a shell treats it: during a reply it stops the reply (a second Ctrl-C before the reply has
 * stopped quits), anywhere else it quits with exit code 130.
 *
 * <p>One handler is installed once and never replaced: the JVM's signal-chaining library (libjsig, which the
 * launcher preloads for PoCL) keeps the first Java handler but mishandles handlers swapped back and forth, so
 * a handler restored after a reply would leave the next Ctrl-C doing nothing.
 */
final class Interrupt {
    static final int EXIT_CODE = 130;

    private static final Interrupt PROCESS = new Interrupt(System::exit);
    private static final AtomicBoolean INSTALLED = new AtomicBoolean();

    private final IntConsumer exit;
    private final AtomicReference<Runnable> reply = new AtomicReference<>();
    private final AtomicBoolean cancelled = new AtomicBoolean();

    Interrupt(IntConsumer exit) {
        this.exit = exit;
    }

    /** This process's Ctrl-C handling, installed on first use. */
    static Interrupt process() {
        if (INSTALLED.compareAndSet(false, true)) install(PROCESS);
        return PROCESS;
    }

    /** Makes SIGINT call {@code target}; false where it cannot (SIGINT ignored at start, or no SIGINT at all). */
    static boolean install(Interrupt target) {
        try {
            // A process started with SIGINT ignored (a background job of a shell without job control, nohup) keeps it
            // ignored: HotSpot then installs nothing and hands back SIG_IGN, and Ctrl-C never reaches it, as intended.
            return Signal.handle(new Signal("INT"), s -> target.onCtrlC()) != SignalHandler.SIG_IGN;
        } catch (IllegalArgumentException unsupported) {
            return false; // no SIGINT on this platform: Ctrl-C keeps its default meaning
        }
    }

    /** Ctrl-C calls {@code cancel} until the returned scope is closed (a reply's lifetime). */
    Scope duringReply(Runnable cancel) {
        cancelled.set(false);
        reply.set(cancel);
        return () -> reply.set(null);
    }

    /** What a Ctrl-C does now. */
    void onCtrlC() {
        Runnable r = reply.get();
        if (r == null || !cancelled.compareAndSet(false, true)) {
            System.out.println();
            System.out.flush();
            exit.accept(EXIT_CODE);
            return;
        }
        r.run();
    }

    /** A reply's span; closing it takes no exception. */
    interface Scope extends AutoCloseable {
        @Override
        void close();
    }
}
