package io.gossgpu.springai.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Engine;
import io.gossgpu.demo.DemoCheckpoint;
import io.gossgpu.springai.GossChatModel;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The starter opens the engine once from goss.* (the demo model on the cpu backend), exposes it and the
 * Spring AI ChatModel on it, closes it with the context, backs off for the application's own beans, and fails the
 * start with one line when goss.model is wrong.
 */
class GossAutoConfigurationTest {
    static final Path DEMO = DemoCheckpoint.unpack(Path.of(System.getProperty("java.io.tmpdir"), "goss-gpu-tests"));

    final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(GossAutoConfiguration.class));

    @Test
    void opensTheEngineOnceExposesTheModelAndClosesWithTheContext() {
        AtomicReference<Engine> engine = new AtomicReference<>();
        runner.withPropertyValues(
                        "goss.model=" + DEMO,
                        "goss.backend=cpu",
                        "goss.threads=1",
                        "goss.temperature=0",
                        "goss.max-tokens=64",
                        "goss.context=1024")
                .run(context -> {
                    assertNull(context.getStartupFailure());
                    assertEquals(1, context.getBeansOfType(Engine.class).size());
                    engine.set(context.getBean(Engine.class));
                    assertTrue(
                            engine.get().backendDescription().toLowerCase().contains("cpu"),
                            engine.get().backendDescription());
                    ChatOptions options = context.getBean(ChatOptions.class);
                    assertEquals(1024, options.contextLength());
                    assertEquals(64, options.maxTokens());
                    assertTrue(options.sampling().isGreedy());
                    ChatModel model = context.getBean(ChatModel.class);
                    assertInstanceOf(GossChatModel.class, model);
                    String answer = model.call(new Prompt("What is 17 + 25?"))
                            .getResult()
                            .getOutput()
                            .getText();
                    assertTrue(answer.contains("42"), answer);
                    // the model replied on the engine bean: its chat is kept open there for the next request
                    assertEquals(1, engine.get().openSessions());
                    assertSame(engine.get(), context.getBean(Engine.class));
                });
        GossException closed =
                assertThrows(GossException.class, () -> engine.get().newChat(ChatOptions.defaults()));
        assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
        assertEquals(0, engine.get().openSessions(), "the model's chats were closed with it");
    }

    @Configuration
    static class OwnEngine {
        static final AtomicReference<Engine> made = new AtomicReference<>();

        @Bean
        Engine myEngine() {
            Engine e = Engine.open(io.gossgpu.api.EngineOptions.of(DEMO).withBackend("reference"));
            made.set(e);
            return e;
        }
    }

    @Test
    void theApplicationsOwnEngineIsUsedAndNoGossModelIsNeeded() {
        runner.withUserConfiguration(OwnEngine.class).run(context -> {
            assertNull(context.getStartupFailure());
            assertSame(OwnEngine.made.get(), context.getBean(Engine.class));
            assertNotNull(context.getBean(GossChatModel.class));
        });
    }

    @Test
    void propertiesBindToTheEngineAndChatOptions() {
        runner.withUserConfiguration(OwnEngine.class)
                .withPropertyValues(
                        "goss.model=/models/x",
                        "goss.backend=opencl",
                        "goss.threads=3",
                        "goss.mmap=false",
                        "goss.knobs.GOSS_CUDA_ATTENTION_BLOCK=128",
                        "goss.knobs[opencl.device]=1",
                        "goss.prefill-chunk=64",
                        "goss.top-p=0.9",
                        "goss.top-k=40",
                        "goss.seed=7",
                        "goss.reasoning-effort=high",
                        "goss.instructions=Be brief.")
                .run(context -> {
                    GossProperties p = context.getBean(GossProperties.class);
                    var e = p.engineOptions();
                    assertEquals(Path.of("/models/x"), e.model());
                    assertEquals("opencl", e.backend());
                    assertFalse(e.mmap());
                    assertEquals(64, e.prefillChunk());
                    assertEquals("3", e.backendOptions().get("GOSS_CPU_THREADS"));
                    assertEquals("128", e.backendOptions().get("GOSS_CUDA_ATTENTION_BLOCK"));
                    assertEquals("1", e.backendOptions().get("GOSS_OPENCL_DEVICE"));
                    ChatOptions c = context.getBean(ChatOptions.class);
                    assertEquals(0.9f, c.sampling().topP());
                    assertEquals(40, c.sampling().topK());
                    assertEquals(7, c.sampling().seed());
                    assertEquals("HIGH", c.reasoningEffort().name());
                    assertEquals("Be brief.", c.instructions());
                });
        runner.withUserConfiguration(OwnEngine.class)
                .withPropertyValues("goss.reasoning-effort=extreme")
                .run(context -> assertTrue(
                        find(context.getStartupFailure())
                                .getMessage()
                                .contains("reasoning effort must be low, medium or high"),
                        String.valueOf(context.getStartupFailure())));
    }

    @Test
    void aBadModelPathFailsTheStartInOneLine() {
        Path missing = DEMO.resolveSibling("no-such-model");
        runner.withPropertyValues("goss.model=" + missing, "goss.backend=cpu").run(context -> {
            Throwable failure = context.getStartupFailure();
            assertNotNull(failure);
            GossStartupException e = find(failure);
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
            assertTrue(e.getMessage().startsWith("goss-gpu cannot open goss.model=" + missing), e.getMessage());
            assertTrue(e.getMessage().contains("not found"), e.getMessage());
            FailureAnalysis analysis = new GossFailureAnalyzer().analyze(failure);
            assertEquals(e.getMessage(), analysis.getDescription());
        });
        runner.run(context ->
                assertTrue(find(context.getStartupFailure()).getMessage().startsWith("goss.model is not set")));
    }

    private static GossStartupException find(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) if (c instanceof GossStartupException g) return g;
        throw new AssertionError("no GossStartupException in", t);
    }
}
