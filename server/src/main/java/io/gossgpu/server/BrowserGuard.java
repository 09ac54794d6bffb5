package io.gossgpu.server;

import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import java.net.URI;
import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Keeps web pages from driving the server through a visitor's browser, which can reach loopback:
 * <ul>
 *   <li>{@code Host} must be an IP address, {@code localhost} (or a {@code .localhost} name), the name the server
 *       listens on, or one of {@link ServerOptions#allowedHosts()}: a page on a DNS-rebinding name ({@code
 *       evil.example} resolved to 127.0.0.1) gets 403, so it cannot read replies;</li>
 *   <li>an {@code Origin} (sent by browsers only) must be one of {@link ServerOptions#corsOrigins()} or the server
 *       itself, else 403: a cross-site page cannot start generations;</li>
 *   <li>a POST must say {@code Content-Type: application/json} (else 415): a form or {@code text/plain} body, which a
 *       page may send cross-site without asking first, is never read.</li>
 * </ul>
 */
final class BrowserGuard {
    private final boolean anyHost;
    private final Set<String> hosts;
    private final boolean anyOrigin;
    private final Set<String> origins;

    BrowserGuard(ServerOptions options) {
        Set<String> allowed = names(options.allowedHosts());
        this.anyHost = allowed.contains("*");
        allowed.add(options.host().toLowerCase(Locale.ROOT));
        this.hosts = Set.copyOf(allowed);
        Set<String> o = names(options.corsOrigins());
        this.anyOrigin = o.contains("*");
        this.origins = Set.copyOf(o.stream().map(s -> s.replaceAll("/+$", "")).collect(Collectors.toSet()));
    }

    private static Set<String> names(String commaList) {
        if (commaList == null) return new java.util.HashSet<>();
        return Arrays.stream(commaList.split(","))
                .map(String::trim)
                .filter(s -> !s.isEmpty())
                .map(s -> s.toLowerCase(Locale.ROOT))
                .collect(Collectors.toCollection(java.util.HashSet::new));
    }

    /** A Javalin before-handler: throws a 403 or 415 {@link ApiError} for a request a browser page may have forged. */
    void check(Context ctx) {
        String host = ctx.header("Host");
        if (host != null && !hostAllowed(hostName(host)))
            throw new ApiError(
                    403,
                    "invalid_request_error",
                    "host_not_allowed",
                    null,
                    "Host '" + host + "' is not allowed; start the server with --allowed-hosts " + hostName(host)
                            + " to accept it",
                    null);
        String origin = ctx.header("Origin");
        if (origin != null && !originAllowed(origin, host))
            throw new ApiError(
                    403,
                    "invalid_request_error",
                    "origin_not_allowed",
                    null,
                    "Origin '" + origin + "' is not allowed; start the server with --cors-origins " + origin
                            + " to let that page call the API",
                    null);
        if (ctx.method() == HandlerType.POST && !isJson(ctx.header("Content-Type")))
            throw new ApiError(
                    415,
                    "invalid_request_error",
                    "unsupported_media_type",
                    null,
                    "the body must be JSON sent with 'Content-Type: application/json'"
                            + (ctx.header("Content-Type") == null ? "" : ", not '" + ctx.header("Content-Type") + "'"),
                    null);
    }

    boolean hostAllowed(String name) {
        if (anyHost || hosts.contains(name)) return true;
        if (name.equals("localhost") || name.endsWith(".localhost")) return true;
        // A literal address cannot be re-pointed by DNS: a page can only name it when it was loaded from it.
        return isIpLiteral(name);
    }

    private boolean originAllowed(String origin, String host) {
        String o = origin.toLowerCase(Locale.ROOT).replaceAll("/+$", "");
        if (anyOrigin || origins.contains(o)) return true;
        try { // the server's own origin (a page it served, were it to serve any)
            URI u = URI.create(o);
            return host != null && u.getAuthority() != null && u.getAuthority().equals(host.toLowerCase(Locale.ROOT));
        } catch (IllegalArgumentException malformed) {
            return false;
        }
    }

    /** {@code example.com:8080} → {@code example.com}; {@code [::1]:8080} → {@code ::1}. */
    static String hostName(String hostHeader) {
        String h = hostHeader.trim().toLowerCase(Locale.ROOT);
        if (h.startsWith("[")) {
            int end = h.indexOf(']');
            return end > 0 ? h.substring(1, end) : h;
        }
        int colon = h.indexOf(':');
        if (colon >= 0 && h.indexOf(':', colon + 1) < 0) h = h.substring(0, colon);
        return h.endsWith(".") ? h.substring(0, h.length() - 1) : h;
    }

    private static boolean isIpLiteral(String name) {
        if (name.contains(":")) return name.matches("[0-9a-f:.]+");
        return name.matches("\\d{1,3}(\\.\\d{1,3}){3}");
    }

    private static boolean isJson(String contentType) {
        if (contentType == null) return false;
        String mime = contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
        return mime.equals("application/json") || (mime.startsWith("application/") && mime.endsWith("+json"));
    }
}
