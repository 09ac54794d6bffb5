package example.springai;

import io.gossgpu.api.DemoModel;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Flux;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * gpt-oss in a Spring Boot application through Spring AI: a chat, the same chat streamed, and a tool call through
 * {@code ChatClient} with a {@code @Tool} method. The starter opens the model {@code goss.model} names (a gpt-oss
 * checkpoint folder); without one, the demo model that ships in engine-core's jar (unpacked under target/).
 */
@SpringBootApplication
public class WeatherApp {

    /** The tool: a stand-in weather service, which remembers the cities it was asked about. */
    public static class Weather {
        final List<String> cities = new CopyOnWriteArrayList<>();

        @Tool(name = "get_weather", description = "Gets the current weather in a city.")
        public String getWeather(@ToolParam(description = "The city name") String city) {
            cities.add(city);
            return "{\"city\":\"" + city + "\",\"temperature_c\":14,\"condition\":\"rainy\"}";
        }
    }

    /** What the application asks the model, through the ChatClient Spring AI builds on goss-gpu's ChatModel. */
    public static class Assistant {
        private final ChatClient chat;
        private final Weather weather;

        Assistant(ChatClient chat, Weather weather) {
            this.chat = chat;
            this.weather = weather;
        }

        /** A chat: one question, one answer. */
        public String ask(String question) {
            return chat.prompt(question).call().content();
        }

        /** The same, streamed: the answer's pieces as they are generated. */
        public Flux<String> askStreamed(String question) {
            return chat.prompt(question).stream().content();
        }

        /** A chat with the weather tool: ChatClient runs getWeather when the model calls it and sends back its result. */
        public String askWithTools(String question) {
            return chat.prompt(question).tools(weather).call().content();
        }
    }

    @Bean
    Weather weather() {
        return new Weather();
    }

    @Bean
    Assistant assistant(ChatClient.Builder chat, Weather weather) {
        return new Assistant(chat.build(), weather);
    }

    /** Starts the application; goss.model defaults to the demo model (any property source that sets it wins). */
    static ConfigurableApplicationContext start(String... args) {
        SpringApplication app = new SpringApplication(WeatherApp.class);
        app.setDefaultProperties(Map.of("goss.model", DemoModel.unpack(Path.of("target")).toString()));
        return app.run(args);
    }

    public static void main(String[] args) {
        try (ConfigurableApplicationContext context = start(args)) {
            Assistant assistant = context.getBean(Assistant.class);
            System.out.println(assistant.ask("What is 17 + 25?"));
            assistant.askStreamed("What is 17 + 25?").doOnNext(System.out::print).blockLast();
            System.out.println();
            System.out.println(assistant.askWithTools("What's the weather in Paris?"));
            System.out.println("(get_weather ran for " + context.getBean(Weather.class).cities + ")");
        }
    }
}
