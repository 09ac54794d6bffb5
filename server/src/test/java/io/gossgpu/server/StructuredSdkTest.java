package io.gossgpu.server;

import static org.junit.jupiter.api.Assertions.*;

import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.StructuredChatCompletion;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.StructuredResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The OpenAI Java SDK's structured outputs (its {@code responseFormat(Class)} and {@code text(Class)}, the Java side
 * of Python's {@code client.beta.chat.completions.parse} and {@code responses.parse}): the SDK derives a strict JSON
 * schema from a class, the server constrains the answer to it and shows it in the developer message, and the SDK
 * parses the answer back into the class. The random-weight model is scripted (boosted logits, so the constrained
 * steps follow the script too); a scripted answer the schema did not allow would come out changed.
 */
class StructuredSdkTest extends ScriptedSdkTest {

    /** Fields in alphabetical order, as declared: the constrained answer writes them in the schema's order. */
    public static class City {
        public String city;
        public long population;
        public List<String> tags;
    }

    public static class Stop {
        public String name;
        public long nights;
    }

    public static class Trip {
        public String from;
        public List<Stop> stops;
    }

    StructuredSdkTest() {
        backend.boosted = true;
        backend.boost = 40;
    }

    @Override
    ServerOptions options() {
        return TestServers.options().withContextLength(2048);
    }

    static String answer(String json) {
        return "<|channel|>analysis<|message|>Give the facts.<|end|><|start|>assistant<|channel|>final<|message|>"
                + json + "<|return|>";
    }

    /** A greedy chat completion of at most {@code maxTokens} whose answer the SDK parses into a {@link City}. */
    private StructuredChatCompletion<City> askAboutParis(long maxTokens) {
        return client.chat()
                .completions()
                .create(ChatCompletionCreateParams.builder()
                        .model("gpt-oss")
                        .addUserMessage("Tell me about the capital of France.")
                        .temperature(0)
                        .maxCompletionTokens(maxTokens)
                        .responseFormat(City.class)
                        .build());
    }

    @Test
    void chatCompletionsParseIntoTheClass() {
        backend.say(answer("{\"city\":\"Paris\",\"population\":2100000,\"tags\":[\"capital\",\"old\"]}"));
        StructuredChatCompletion<City> c = askAboutParis(200);
        City city = c.choices().get(0).message().content().orElseThrow();
        assertEquals("Paris", city.city);
        assertEquals(2_100_000L, city.population);
        assertEquals(List.of("capital", "old"), city.tags);
        assertEquals(
                com.openai.models.chat.completions.ChatCompletion.Choice.FinishReason.STOP,
                c.choices().get(0).finishReason());
    }

    @Test
    void responsesParseIntoTheClass() {
        backend.say(answer(
                "{\"from\":\"Oslo\",\"stops\":[{\"name\":\"Bergen\",\"nights\":2},{\"name\":\"Alta\",\"nights\":1}]}"));
        StructuredResponse<Trip> r = client.responses()
                .create(ResponseCreateParams.builder()
                        .model("gpt-oss")
                        .input("Plan a trip in Norway.")
                        .temperature(0)
                        .maxOutputTokens(200)
                        .text(Trip.class)
                        .build());
        List<Trip> trips = r.output().stream()
                .flatMap(item -> item.message().stream())
                .flatMap(m -> m.content().stream())
                .flatMap(content -> content.outputText().stream())
                .toList();
        assertEquals(1, trips.size());
        Trip t = trips.getFirst();
        assertEquals("Oslo", t.from);
        assertEquals(2, t.stops.size());
        assertEquals("Bergen", t.stops.get(0).name);
        assertEquals(2, t.stops.get(0).nights);
        assertEquals("Alta", t.stops.get(1).name);
        assertEquals(1, t.stops.get(1).nights);
    }

    /** An answer the schema does not allow cannot come out: the scripted wrong key is masked and the answer still parses. */
    @Test
    void aScriptedAnswerOutsideTheSchemaIsHeldToIt() {
        backend.say(answer("{\"town\":\"Paris\"}"));
        StructuredChatCompletion<City> c = askAboutParis(300);
        var choice = c.choices().get(0);
        String raw = choice.message().rawMessage().content().orElseThrow();
        assertTrue(raw.startsWith("{\"c") && !raw.contains("town"), raw);
        if (choice.finishReason() == com.openai.models.chat.completions.ChatCompletion.Choice.FinishReason.STOP)
            assertNotNull(choice.message().content().orElseThrow().city, raw);
    }

    /** A strict schema whose pattern is outside the supported subset is a 400 with one line naming where, before any decoding. */
    @Test
    void anUnsupportedPatternIsA400() throws Exception {
        String body = "{\"model\":\"gpt-oss\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"response_format\":"
                + "{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"c\",\"strict\":true,\"schema\":{\"type\":\"object\","
                + "\"properties\":{\"code\":{\"type\":\"string\",\"pattern\":\"^(?=A)[A-Z]+$\"}},\"required\":[\"code\"],"
                + "\"additionalProperties\":false}}}}";
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                                        "http://127.0.0.1:" + server.port() + "/v1/chat/completions"))
                                .header("Content-Type", "application/json")
                                .header("Authorization", "Bearer sk-test")
                                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(400, r.statusCode(), r.body());
        String message = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(r.body())
                .path("error")
                .path("message")
                .asText();
        assertTrue(message.startsWith("the JSON schema's pattern at #/properties/code uses '(?'"), message);
        assertFalse(message.contains("\n"), message);
    }
}
