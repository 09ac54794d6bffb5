package io.gossgpu.constrain;

import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.util.List;

/** Schemas the structured-output tests share, and the oracle that checks documents against them (networknt). */
final class TestSchemas {
    private TestSchemas() {}

    static final List<String> ALL =
            List.of("""
            {"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},
             "required":["name","age"],"additionalProperties":false}""", """
            {"type":"object","properties":{"city":{"type":"string"},"temperature":{"type":"number"},
             "unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city","temperature","unit"],
             "additionalProperties":false}""", """
            {"type":"object","properties":{"items":{"type":"array","items":{"type":"object",
              "properties":{"id":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"},"maxItems":3}},
              "required":["id","tags"],"additionalProperties":false},"minItems":1,"maxItems":4}},
             "required":["items"],"additionalProperties":false}""", """
            {"type":"object","properties":{"answer":{"anyOf":[{"type":"string"},{"type":"null"},
              {"type":"object","properties":{"x":{"type":"number"}},"required":["x"],"additionalProperties":false}]}},
             "required":["answer"],"additionalProperties":false}""", """
            {"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},
              "children":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},
              "required":["value","children"],"additionalProperties":false}},
             "type":"object","properties":{"root":{"$ref":"#/$defs/node"}},"required":["root"],"additionalProperties":false}""", """
            {"type":"object","properties":{"a":{"type":"string"},"b":{"type":"boolean"},"c":{"type":["integer","null"]}},
             "required":["b"],"additionalProperties":false}""", """
            {"type":"object","properties":{"code":{"type":"string","minLength":3,"maxLength":5},
             "flag":{"const":"on"}},"required":["code","flag"],"additionalProperties":false}""", """
            {"type":"array","items":{"enum":[1,12,"x",true,null,{"k":[1]}]},"minItems":2,"maxItems":5}""", """
            {"type":"object","properties":{"shape":{"anyOf":[
              {"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number"}},"required":["kind","r"],"additionalProperties":false},
              {"type":"object","properties":{"kind":{"const":"rect"},"w":{"type":"number"},"h":{"type":"number"}},"required":["kind","w","h"],"additionalProperties":false}]}},
             "required":["shape"],"additionalProperties":false}""", """
            {"type":"object","properties":{"meta":{"type":"object","additionalProperties":{"type":"integer"}}},
             "required":["meta"],"additionalProperties":false}""", """
            {"type":"object","properties":{"deep":{"type":"object","properties":{"deeper":{"type":"object",
              "properties":{"deepest":{"type":"array","items":{"type":"number"}}},"required":["deepest"],"additionalProperties":false}},
              "required":["deeper"],"additionalProperties":false}},"required":["deep"],"additionalProperties":false}""", """
            {"type":"object","properties":{"\\"quoted\\" key":{"type":"string","maxLength":2},"ünï":{"type":"null"}},
             "required":["\\"quoted\\" key","ünï"],"additionalProperties":false}""", """
            {"type":"object"}""", """
            {"type":"object","properties":{"opt1":{"type":"integer"},"opt2":{"type":"string"},"req":{"type":"boolean"},"opt3":{"type":"number"}},
             "required":["req"],"additionalProperties":false}""", """
            {"type":"object","properties":{"sku":{"type":"string","pattern":"^[A-Z]{3}-\\\\d{4}$"},
             "email":{"type":"string","pattern":"^[a-z]+@[a-z]+\\\\.(com|org)$","maxLength":30},
             "note":{"type":"string","pattern":"ok","minLength":3,"maxLength":12}},
             "required":["sku","email","note"],"additionalProperties":false}""", """
            {"type":"array","items":{"type":"string","pattern":"^(yes|no|[0-9]+)$","maxLength":4},"minItems":1,"maxItems":3}""");

    /**
     * {@code schema} with every string limited to 40 characters and every array to 4 items where it sets no limit: the
     * demo model knows no JSON and may write a string forever; a bounded schema still holds only documents the
     * original accepts.
     */
    static String bounded(String schema) {
        try {
            com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
            com.fasterxml.jackson.databind.JsonNode root = json.readTree(schema);
            bound(root);
            return json.writeValueAsString(root);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void bound(com.fasterxml.jackson.databind.JsonNode n) {
        if (n instanceof com.fasterxml.jackson.databind.node.ObjectNode o) {
            String type = o.path("type").asText("");
            boolean listsString =
                    o.path("type").isArray() && o.path("type").toString().contains("\"string\"");
            if ((type.equals("string") || listsString) && !o.has("maxLength")) o.put("maxLength", 40);
            if (type.equals("array") && !o.has("maxItems")) o.put("maxItems", 4);
        }
        if (n.isContainerNode()) n.forEach(TestSchemas::bound);
    }

    /** The oracle's complaints about {@code json} under {@code schema} (empty: it validates). */
    static List<String> violations(String schema, String json) {
        Schema s = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
                .getSchema(schema);
        return s.validate(json, InputFormat.JSON).stream()
                .map(e -> e.getMessage())
                .toList();
    }
}
