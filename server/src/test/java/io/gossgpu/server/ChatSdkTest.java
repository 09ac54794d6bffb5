package io.gossgpu.server;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The official OpenAI Java SDK against the server: chat completions, streaming, tools, completions, responses. */
class ChatSdkTest {
    static TestServers.Scripted backend;
    static GossServer server;
    static OpenAIClient client;

    @BeforeAll
    static void start() throws Exception {
        backend = new TestServers.Scripted();
        server = TestServers.start(TestServers.options().withApiKey("sk-test"), backend);
        client = OpenAIOkHttpClient.builder().baseUrl("http://127.0.0.1:" + server.port() + "/v1").apiKey("sk-test")
                .maxRetries(0).build();
    }

    @AfterAll
    static void stop() {
        if (client != null) client.close();
        if (server != null) server.close();
    }

    @Test
    void chatWithReasoningAndFinalAnswer() {
        backend.script.clear();
        backend.say("<|channel|>analysis<|message|>User greets.<|end|><|start|>assistant<|channel|>final<|message|>Hello there.<|return|>");
        long t0 = System.nanoTime();
        ChatCompletion c = client.chat().completions().create(ChatCompletionCreateParams.builder()
                .model("gpt-oss").addSystemMessage("Be brief.").addUserMessage("Hi").temperature(0).maxCompletionTokens(40).build());
        System.out.printf("chat took %.0f ms%n", (System.nanoTime() - t0) / 1e6);
        ChatCompletion.Choice ch = c.choices().get(0);
        assertEquals("Hello there.", ch.message().content().orElseThrow());
        assertEquals("User greets.", ch.message()._additionalProperties().get("reasoning_content").asString().orElseThrow());
        assertEquals(ChatCompletion.Choice.FinishReason.STOP, ch.finishReason());
        var usage = c.usage().orElseThrow();
        assertTrue(usage.promptTokens() > 50, "prompt tokens " + usage.promptTokens());
        assertEquals(backend_tokens("<|channel|>analysis<|message|>User greets.<|end|><|start|>assistant<|channel|>final<|message|>Hello there.<|return|>"),
                usage.completionTokens());
    }

    static int backend_tokens(String harmony) {
        return io.gossgpu.tokenizer.O200kHarmony.get().encodeWithSpecials(harmony).length;
    }
}
