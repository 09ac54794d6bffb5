package io.gossgpu.server;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** A server-sent-events stream on a servlet response; every event is flushed at once. */
final class Sse {
    private final HttpServletResponse res;
    private ServletOutputStream out;

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

    void done() throws IOException {
        write("data: [DONE]\n\n");
    }

    private void write(String s) throws IOException {
        ServletOutputStream o = out();
        o.write(s.getBytes(StandardCharsets.UTF_8));
        o.flush();
    }
}
