package io.gossgpu.api;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The library's messages (System.Logger records under {@code io.gossgpu}, which the JDK hands to java.util.logging)
 * that a piece of test code logged, each as {@code LEVEL message}, e.g. {@code "WARNING unknown setting X"}.
 */
public final class CapturedLog {
    private CapturedLog() {}

    /** Runs {@code body} with the library's messages captured, and returns them. */
    public static List<String> of(Runnable body) {
        List<String> out = Collections.synchronizedList(new ArrayList<>());
        try (AutoCloseable c = into(out)) {
            body.run();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        return List.copyOf(out);
    }

    /**
     * Adds each message logged under {@code io.gossgpu} to {@code out} (and passes none to the root's console) until
     * the returned capture is closed; for code that throws.
     */
    public static AutoCloseable into(List<String> out) {
        Logger root = Logger.getLogger("io.gossgpu");
        Handler h = new Handler() {
            @Override
            public void publish(LogRecord r) {
                out.add(r.getLevel().getName() + " " + r.getMessage());
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        Level level0 = root.getLevel();
        boolean parents0 = root.getUseParentHandlers();
        root.setLevel(Level.ALL);
        root.setUseParentHandlers(false);
        root.addHandler(h);
        return () -> {
            root.removeHandler(h);
            root.setUseParentHandlers(parents0);
            root.setLevel(level0);
        };
    }
}
