package io.gossgpu.api;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** What a piece of test code printed on {@code System.err} (the engine's warnings and notices go there). */
public final class CapturedStderr {
    private CapturedStderr() {}

    /** Runs {@code body} with {@code System.err} captured, and returns what it printed; the old stream is restored. */
    public static String of(Runnable body) {
        PrintStream err0 = System.err;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try {
            System.setErr(new PrintStream(bytes, true, StandardCharsets.UTF_8));
            body.run();
        } finally {
            System.setErr(err0);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
