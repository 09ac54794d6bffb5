package io.gossgpu.langchain4j.readme;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.service.AiServices;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.langchain4j.GossChatModel;

import java.nio.file.Path;

public class WeatherAssistant {
    interface Assistant {
        String chat(String message);
    }

    static class Weather {
        @Tool(name = "get_weather", value = "Gets the current weather in a city.")
        String getWeather(@P(name = "city", value = "The city name") String city) {
            return "{\"city\":\"" + city + "\",\"temperature_c\":21,\"condition\":\"cloudy\"}";
        }
    }

    public static void main(String[] args) {
        // args[0]: a gpt-oss checkpoint folder (or the demo model, see below)
        try (GossChatModel model = GossChatModel.open(EngineOptions.of(Path.of(args[0])), ChatOptions.defaults())) {
            System.out.println(model.chat("What is 17 + 25?"));
            Assistant assistant = AiServices.builder(Assistant.class).chatModel(model).tools(new Weather()).build();
            System.out.println(assistant.chat("What's the weather in Paris?"));
        }
    }
}
