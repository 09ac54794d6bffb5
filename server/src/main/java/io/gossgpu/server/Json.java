package io.gossgpu.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** The server's one ObjectMapper and small builders. */
final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {}

    static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    static ArrayNode array() {
        return MAPPER.createArrayNode();
    }

    static String write(Object node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A parse error in a few words with where it is ({@code Unexpected end-of-input ... at line 1, column 10}), without
     * Jackson's internals (source descriptions, feature names) that mean nothing to a client.
     */
    static String describe(com.fasterxml.jackson.core.JsonProcessingException e) {
        String m = e.getOriginalMessage() == null ? "malformed" : e.getOriginalMessage();
        int cut = m.indexOf(" (start marker at");
        if (cut < 0) cut = m.indexOf(" at [Source:");
        if (cut < 0) cut = m.indexOf("[Source:");
        if (cut >= 0) m = m.substring(0, cut);
        m = m.replaceAll("\\s*\\n.*", "").strip();
        var at = e.getLocation();
        return at == null || at.getLineNr() < 0 ? m : m + " at line " + at.getLineNr() + ", column " + at.getColumnNr();
    }

    static ObjectNode error(String message, String type, String param, String code) {
        ObjectNode e = object();
        e.put("message", message);
        e.put("type", type);
        e.put("param", param);
        e.put("code", code);
        ObjectNode root = object();
        root.set("error", e);
        return root;
    }
}
