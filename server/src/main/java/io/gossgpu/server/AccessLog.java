package io.gossgpu.server;

import io.gossgpu.Timings;
import java.util.Set;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.RequestLog;
import org.eclipse.jetty.server.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * One line per answered request on the {@code goss.access} logger (Jetty calls it for every request, also those it
 * answered itself, such as a 408): method, path, status, then as key-values the prompt and completion tokens, time
 * to first token, total time, slot, client address, and the error code; and the same numbers into the {@link ServerMetrics}.
 * A request whose client went away before its reply was complete is logged with status {@value #CLIENT_GONE} and
 * {@code client_gone}, whatever status line had been sent. Probes
 * ({@code /health*}, {@code /metrics}) log at DEBUG so that they do not drown the rest.
 */
final class AccessLog implements RequestLog {
    static final Logger LOG = LoggerFactory.getLogger("goss.access");
    private static final Set<String> ROUTES = Set.of(
            "/health",
            "/health/live",
            "/health/ready",
            "/metrics",
            "/v1/models",
            "/v1/chat/completions",
            "/v1/completions",
            "/v1/responses");

    /** The status logged for a request whose client went away before its reply was complete (as nginx logs it). */
    static final int CLIENT_GONE = 499;

    private final ServerMetrics metrics;

    AccessLog(ServerMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public void log(Request request, Response response) {
        int status = response.getCommittedMetaData() != null
                ? response.getCommittedMetaData().getStatus()
                : response.getStatus();
        RequestNotes notes = RequestNotes.find(request);
        boolean gone = notes != null && notes.clientGone;
        if (gone) status = CLIENT_GONE; // the 200 sent before the client left says nothing of how the request ended
        long totalMs = Math.max(0, System.currentTimeMillis() - request.getTimeStamp());
        String path = request.getRequestURI() == null ? "" : request.getRequestURI();
        String endpoint = endpoint(path);
        metrics.request(endpoint, status, totalMs / 1000.0);
        Generation.Outcome o = notes == null ? null : notes.outcome;
        if (o != null) metrics.generation(o);

        boolean probe = endpoint.startsWith("/health") || endpoint.equals("/metrics");
        LoggingEventBuilder line = LOG.atLevel(probe ? Level.DEBUG : Level.INFO);
        if (o != null) {
            line = line.addKeyValue("prompt_tokens", o.promptTokens())
                    .addKeyValue("cached_tokens", o.cachedTokens())
                    .addKeyValue("completion_tokens", o.completionTokens());
            Timings t = o.timings();
            if (t != null && o.completionTokens() > 0)
                line = line.addKeyValue("ttft_ms", Math.round(t.timeToFirstTokenMs()));
        }
        line = line.addKeyValue("total_ms", totalMs);
        if (notes != null && notes.slot >= 0) line = line.addKeyValue("slot", notes.slot);
        if (gone) line = line.addKeyValue("client_gone", true);
        if (o != null && o.aborted()) line = line.addKeyValue("aborted", true);
        if (notes != null && notes.error != null) line = line.addKeyValue("error", notes.error);
        // Pinned when the request began (JettySetup): by now a client that left has no connection to ask.
        java.net.InetSocketAddress client = request.getRemoteInetSocketAddress();
        if (client != null && client.getAddress() != null)
            line = line.addKeyValue("client", client.getAddress().getHostAddress());
        line.log("{} {} {}", request.getMethod(), path, status);
    }

    /** The route a path belongs to, for the metrics' endpoint label (never a raw path, whose values are unbounded). */
    static String endpoint(String path) {
        String p = path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        if (ROUTES.contains(p)) return p;
        if (p.startsWith("/v1/models/")) return "/v1/models/{id}";
        if (p.startsWith("/v1/responses/")) return "/v1/responses/{id}";
        return "other";
    }
}
