package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.InputFormat;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.gossgpu.GossException;
import io.gossgpu.constrain.JsonMachine;
import io.gossgpu.testkit.DemoModels;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Records as structured-output types: schema (checked by networknt), matcher, parse, and a demo-model round trip. */
class RecordFormatTest {
    enum Kind {
        TOWN,
        CITY
    }

    record Point(double lat, double lon) {}

    record City(
            String name,
            int population,
            List<String> tags,
            Kind kind,
            Point where,
            Map<String, Integer> counts,
            boolean capital) {}

    record Verdict(Kind kind, int count, boolean sure, List<Kind> also) {}

    record Loop(String name, List<Loop> children) {}

    private static List<String> violations(String schema, String json) {
        return SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
                .getSchema(schema)
                .validate(json, InputFormat.JSON)
                .stream()
                .map(e -> e.getMessage())
                .toList();
    }

    @Test
    void aRecordRoundTripsThroughItsSchema() throws Exception {
        RecordFormat<City> f = RecordFormat.of(City.class);
        City paris = new City(
                "Paris",
                2_100_000,
                List.of("old", "big"),
                Kind.CITY,
                new Point(48.85, 2.35),
                Map.of("museums", 130),
                true);
        String json = new ObjectMapper().writeValueAsString(paris);
        assertTrue(violations(f.schema(), json).isEmpty(), json + " under " + f.schema());
        Object state = JsonMachine.step(
                JsonMachine.start(f.responseFormat().grammar()), json.getBytes(StandardCharsets.UTF_8));
        assertTrue(state != null && JsonMachine.canEnd(state), "the matcher takes " + json);
        assertEquals(paris, f.parse(json));
        assertFalse(
                violations(f.schema(), json.replace("\"CITY\"", "\"VILLAGE\"")).isEmpty(), "enum by name");
        assertFalse(violations(f.schema(), "{\"name\":\"x\"}").isEmpty(), "every component is required");
    }

    @Test
    void unsupportedRecordsAreRefused() {
        assertThrows(GossException.class, () -> RecordFormat.of(Loop.class));
        record Odd(Object anything) {}
        assertThrows(GossException.class, () -> RecordFormat.of(Odd.class));
        assertThrows(GossException.class, () -> RecordFormat.of(Verdict.class).parse("{\"kind\":\"CITY\"}"));
    }

    /** A record without free strings (the demo model never closes one): the reply parses into it. */
    @Test
    void theDemoModelAnswersWithTheRecord() {
        RecordFormat<Verdict> f = RecordFormat.of(Verdict.class);
        try (Engine engine = Engine.open(EngineOptions.of(DemoModels.folder()).withBackend("cpu"));
                Chat chat = engine.newChat(ChatOptions.defaults()
                        .withSampling(Sampling.of(1f, 3))
                        .withMaxTokens(400)
                        .withResponseFormat(f.responseFormat()))) {
            Reply r = chat.send("Is Paris a city?", null);
            assertEquals(StopReason.STOP_TOKEN, r.stopReason(), r.content());
            Verdict v = f.parse(r);
            assertNotNull(v.kind());
            assertTrue(violations(f.schema(), r.content()).isEmpty(), r.content());
        }
    }
}
