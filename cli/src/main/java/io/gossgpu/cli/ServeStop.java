package io.gossgpu.cli;

import io.gossgpu.server.GossServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * How {@code goss-gpu serve} stops: the first SIGTERM or SIGINT (Ctrl-C) releases {@link #signalled}, and the serve
 * command then closes the server, which drains ({@link GossServer#close()}); a second signal during the drain ends the
 * running requests at once. A shutdown hook closes the server too when the JVM exits some other way.
 */
final class ServeStop {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("goss.server");
    final CountDownLatch signalled = new CountDownLatch(1);
    private final GossServer server;
    private final Thread hook;

    ServeStop(GossServer server) {
        this.server = server;
        this.hook = new Thread(
                () -> {
                    signalled.countDown();
                    server.close();
                },
                "goss-serve-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Handles SIGTERM and SIGINT until closed (then the previous handlers are back). */
    AutoCloseable onSignals() {
        List<Runnable> restore = new ArrayList<>();
        for (String name : new String[] {"TERM", "INT"}) {
            try {
                Signal signal = new Signal(name);
                SignalHandler previous = Signal.handle(signal, s -> received(s.getName()));
                restore.add(() -> Signal.handle(signal, previous));
            } catch (IllegalArgumentException unsupported) {
                // no such signal here, or the JVM keeps it (-Xrs)
            }
        }
        return () -> restore.forEach(Runnable::run);
    }

    private void received(String name) {
        if (signalled.getCount() > 0) {
            LOG.info("SIG{} received: stopping (send it again to end running requests at once)", name);
            signalled.countDown();
        } else {
            LOG.info("SIG{} received again: ending running requests now", name);
            server.endRunningRequests();
        }
    }

    void removeHook() {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running
        }
    }
}
