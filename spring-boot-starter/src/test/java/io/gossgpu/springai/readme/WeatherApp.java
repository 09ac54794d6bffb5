package io.gossgpu.springai.readme;

import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

@SpringBootApplication
public class WeatherApp {
    static class Weather {
        @Tool(name = "get_weather", description = "Gets the current weather in a city.")
        String getWeather(@ToolParam(description = "The city name") String city) {
            return "{\"city\":\"" + city + "\",\"temperature_c\":21,\"condition\":\"cloudy\"}";
        }
    }

    public static void main(String[] args) {
        // args: --goss.model=PATH (a gpt-oss checkpoint folder, or the demo model, see below)
        try (var context = SpringApplication.run(WeatherApp.class, args)) {
            ChatClient chat = context.getBean(ChatClient.Builder.class).build();
            System.out.println(chat.prompt("What is 17 + 25?").call().content());
            System.out.println(chat.prompt("What's the weather in Paris?").tools(new Weather()).call().content());
            chat.prompt("What is 17 + 25?").stream().content().doOnNext(System.out::print).blockLast();
            System.out.println();
        }
    }
}
