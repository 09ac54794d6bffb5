package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/**
 * A format whose schema or grammar text was compiled recently reuses that compilation (a patterned schema's masks take
 * tens of ms to precompute; a server's requests repeat a few formats): the same matcher, whatever the name shown.
 */
class ResponseFormatCacheTest {
    static final String SKU =
            "{\"type\":\"object\",\"properties\":{\"sku\":{\"type\":\"string\",\"pattern\":\"^[A-Z]{3}-\\\\d{4}$\"}},"
                    + "\"required\":[\"sku\"],\"additionalProperties\":false}";

    @Test
    void theSameSchemaTextIsCompiledOnce() {
        ResponseFormat a = ResponseFormat.jsonSchema("item", null, SKU),
                b = ResponseFormat.jsonSchema("other", "shown differently", SKU);
        assertSame(a.matcher(), b.matcher());
        assertEquals("other", b.name());
        assertNotSame(
                a.matcher(),
                ResponseFormat.jsonSchema(SKU.replace("{4}", "{5}")).matcher());
        assertSame(
                ResponseFormat.jsonObject().matcher(),
                ResponseFormat.jsonObject().matcher());
        assertSame(
                ResponseFormat.gbnf("root ::= \"yes\" | \"no\"").matcher(),
                ResponseFormat.gbnf("root ::= \"yes\" | \"no\"").matcher());
    }

    @Test
    void onlyTheLastFewAreKept() {
        ResponseFormat first = ResponseFormat.gbnf("root ::= \"a0\"");
        for (int i = 1; i <= 8; i++) ResponseFormat.gbnf("root ::= \"a" + i + "\"");
        assertNotSame(first.matcher(), ResponseFormat.gbnf("root ::= \"a0\"").matcher());
    }

    @Test
    void aSchemaThatFailsIsNotKeptAndFailsAgain() {
        assertThrows(io.gossgpu.GossException.class, () -> ResponseFormat.jsonSchema("{\"type\":\"strange\"}"));
        assertThrows(io.gossgpu.GossException.class, () -> ResponseFormat.jsonSchema("{\"type\":\"strange\"}"));
    }
}
