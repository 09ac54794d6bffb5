package io.gossgpu.server;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** A server-sent-events stream on a servlet response; every event is flushed at once. */
final class Sse {
    private final HttpServletResponse res;
    private ServletOutputStream out;
    private long lastWrite = System.nanoTime();

    /** Idle time after which {@link #ping} writes a comment line. */
    static final long PING_NANOS = 250_000_000L;

    Sse(HttpServletResponse res) {
        this.res = res;
    }

    private ServletOutputStream out() throws IOException {
        if (out == null) {
            res.setStatus(200);
            res.setContentType("text/event-stream; charset=utf-8");
            res.setHeader("Cache-Control", "no-cache");
            res.setHeader("X-Accel-Buffering", "no");
            out = res.getOutputStream();
        }
        return out;
    }

    /** {@code data: JSON} */
    void data(Object json) throws IOException {
        write("data: " + Json.write(json) + "\n\n");
    }

    /** {@code event: TYPE} and {@code data: JSON} (the Responses API names its events). */
    void event(String type, Object json) throws IOException {
        write("event: " + type + "\ndata: " + Json.write(json) + "\n\n");
    }

    /**
     * Writes an SSE comment ({@code :}, ignored by clients) when nothing was written for a while: a generation whose
     * tokens produce no visible text (or reasoning hidden behind a long header) still notices a client that left.
     */
    void ping() throws IOException {
        if (System.nanoTime() - lastWrite >= PING_NANOS) write(":\n\n");
    }

    void done() throws IOException {
        write("data: [DONE]\n\n");
    }

    private void write(String s) throws IOException {
        ServletOutputStream o = out();
        o.write(s.getBytes(StandardCharsets.UTF_8));
        o.flush();
        lastWrite = System.nanoTime();
    }
}
