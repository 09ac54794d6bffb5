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
