package example.springai;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The example application on the demo model, greedy (application.properties; so every answer is known): the demo
 * model answers sums and calls get_weather(city) when it is offered, then reports what the tool said. The tool's
 * result (14°C, rainy) is the example's own, so an answer that has it came from the tool; and the tool records the
 * city it was asked about.
 */
class WeatherAppTest {
    static ConfigurableApplicationContext context;
    static WeatherApp.Assistant assistant;

    @BeforeAll
    static void start() {
        context = WeatherApp.start();
        assistant = context.getBean(WeatherApp.Assistant.class);
    }

    @AfterAll
    static void stop() {
        if (context != null) context.close();
    }

    @Test
    void chatAnswersTheSum() {
        String answer = assistant.ask("What is 17 + 25?");
        assertTrue(answer.contains("42"), answer);
    }

    @Test
    void streamedChatArrivesInPiecesThatAddUpToTheAnswer() {
        List<String> pieces = assistant.askStreamed("What is 17 + 25?").collectList().block(Duration.ofSeconds(60));
        assertTrue(pieces.size() > 1, "streamed in " + pieces.size() + " piece(s)");
        assertEquals(assistant.ask("What is 17 + 25?"), String.join("", pieces));
        assertTrue(String.join("", pieces).contains("42"), String.join("", pieces));
    }

    @Test
    void chatClientRunsTheToolForTheCityAndAnswersWithItsResult() {
        WeatherApp.Weather weather = context.getBean(WeatherApp.Weather.class);
        String answer = assistant.askWithTools("What's the weather in Paris?");
        assertEquals(List.of("Paris"), weather.cities, "get_weather's calls");
        assertTrue(answer.contains("14°C and rainy"), answer);
    }
}
