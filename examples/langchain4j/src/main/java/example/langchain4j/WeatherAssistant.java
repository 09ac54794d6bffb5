package example.langchain4j;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.service.AiServices;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.DemoModel;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.api.Sampling;
import io.gossgpu.langchain4j.GossChatModel;
import io.gossgpu.langchain4j.GossStreamingChatModel;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * gpt-oss in this process through LangChain4j: a chat, the same chat streamed, and a tool call through
 * {@code AiServices} with a {@code @Tool} method. {@code WeatherAssistant [MODEL]}: MODEL is a gpt-oss checkpoint
 * folder; without one, the demo model that ships in engine-core's jar (unpacked under target/).
 */
public final class WeatherAssistant implements AutoCloseable {

    /** What AiServices implements: the user's message in, the answer out (the tool calls run in between). */
    interface Assistant {
        String chat(String message);
    }

    /** The tool: a stand-in weather service, which remembers the cities it was asked about. */
    public static final class Weather {
        final List<String> cities = new CopyOnWriteArrayList<>();

        @Tool(name = "get_weather", value = "Gets the current weather in a city.")
        public String getWeather(@P(name = "city", value = "The city name") String city) {
            cities.add(city);
            return "{\"city\":\"" + city + "\",\"temperature_c\":14,\"condition\":\"rainy\"}";
        }
    }

    final Weather weather = new Weather();
    private final Engine engine;
    private final GossChatModel model;
    private final GossStreamingChatModel streamingModel;
    private final Assistant assistant;

    WeatherAssistant(Path checkpoint) {
        engine = Engine.open(EngineOptions.of(checkpoint));
        // greedy: the same question gets the same answer each time
        ChatOptions options = ChatOptions.defaults().withSampling(Sampling.greedy()).withMaxTokens(256);
        model = new GossChatModel(engine, options);
        streamingModel = new GossStreamingChatModel(engine, options);
        assistant = AiServices.builder(Assistant.class).chatModel(model).tools(weather).build();
    }

    /** A chat: one question, one answer. */
    String chat(String question) {
        return model.chat(question);
    }

    /** The same, streamed: each piece of the answer goes to {@code onPiece} as it is generated. */
    ChatResponse chatStreamed(String question, Consumer<String> onPiece) {
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        streamingModel.chat(question, new StreamingChatResponseHandler() {
            @Override public void onPartialResponse(String piece) { onPiece.accept(piece); }
            @Override public void onCompleteResponse(ChatResponse response) { done.complete(response); }
            @Override public void onError(Throwable error) { done.completeExceptionally(error); }
        });
        return done.join();
    }

    /** A chat with the weather tool: AiServices runs getWeather when the model calls it and sends back its result. */
    String chatWithTools(String question) {
        return assistant.chat(question);
    }

    @Override
    public void close() {
        model.close();
        streamingModel.close();
        engine.close();
    }

    public static void main(String[] args) {
        Path checkpoint = args.length > 0 ? Path.of(args[0]) : DemoModel.unpack(Path.of("target"));
        try (WeatherAssistant example = new WeatherAssistant(checkpoint)) {
            System.out.println(example.chat("What is 17 + 25?"));
            example.chatStreamed("What is 17 + 25?", System.out::print);
            System.out.println();
            System.out.println(example.chatWithTools("What's the weather in Paris?"));
            System.out.println("(get_weather ran for " + example.weather.cities + ")");
        }
    }
}
