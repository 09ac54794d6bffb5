package io.gossgpu.server;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * The fixture of tests that drive the server through the official OpenAI Java SDK: a server over a scripted
 * random-weight model ({@link TestServers.Scripted}) and a client that sends the server's API key, both open for the
 * class's tests, the script cleared after each.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ScriptedSdkTest {
    final TestServers.Scripted backend = new TestServers.Scripted();
    GossServer server;
    OpenAIClient client;

    /** The options the server starts with. */
    abstract ServerOptions options();

    @BeforeAll
    void startServerAndClient() throws Exception {
        ServerOptions options = options();
        server = TestServers.start(options, backend);
        client = OpenAIOkHttpClient.builder()
                .baseUrl("http://127.0.0.1:" + server.port() + "/v1")
                .apiKey(options.apiKey() != null ? options.apiKey() : "unused")
                .maxRetries(0)
                .build();
    }

    @AfterAll
    void stop() {
        if (client != null) client.close();
        if (server != null) server.close();
    }

    @AfterEach
    void clearScript() {
        backend.script.clear();
    }
}
