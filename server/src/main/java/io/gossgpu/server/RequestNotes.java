package io.gossgpu.server;

import jakarta.servlet.http.HttpServletRequest;

/**
 * What a handler learned about its request, for the access log and the metrics: the slot it ran on, the generation's
 * outcome, the error code it was answered with, and whether the client went away. Kept as a request attribute.
 */
final class RequestNotes {
    private static final String ATTRIBUTE = RequestNotes.class.getName();

    volatile int slot = -1;
    volatile Generation.Outcome outcome;
    volatile String error;
    /** The client went away before its reply was complete (noticed at a write). */
    volatile boolean clientGone;

    /** The notes of {@code request}, made on first use. */
    static RequestNotes of(HttpServletRequest request) {
        Object n = request.getAttribute(ATTRIBUTE);
        if (n instanceof RequestNotes notes) return notes;
        RequestNotes notes = new RequestNotes();
        request.setAttribute(ATTRIBUTE, notes);
        return notes;
    }

    /** The notes of {@code request} if a handler made any, else null. */
    static RequestNotes find(HttpServletRequest request) {
        return request.getAttribute(ATTRIBUTE) instanceof RequestNotes notes ? notes : null;
    }
}
