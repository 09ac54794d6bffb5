package example.langchain4j;

import dev.langchain4j.model.chat.response.ChatResponse;
import io.gossgpu.api.DemoModel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The example on the demo model, greedy (so every answer is known): the demo model answers sums and calls
 * get_weather(city) when it is offered, then reports what the tool said. The tool's result (14°C, rainy) is the
 * example's own, so an answer that has it came from the tool; and the tool records the city it was asked about.
 */
class WeatherAssistantTest {
    static WeatherAssistant example;

    @BeforeAll
    static void open() {
        example = new WeatherAssistant(DemoModel.unpack(Path.of("target")));
    }

    @AfterAll
    static void close() {
        if (example != null) example.close();
    }

    @Test
    void chatAnswersTheSum() {
        String answer = example.chat("What is 17 + 25?");
        assertTrue(answer.contains("42"), answer);
    }

    @Test
    void streamedChatArrivesInPiecesThatAddUpToTheAnswer() {
        List<String> pieces = new ArrayList<>();
        ChatResponse response = example.chatStreamed("What is 17 + 25?", pieces::add);
        assertTrue(pieces.size() > 1, "streamed in " + pieces.size() + " piece(s)");
        assertEquals(response.aiMessage().text(), String.join("", pieces));
        assertEquals(example.chat("What is 17 + 25?"), response.aiMessage().text());
        assertTrue(response.aiMessage().text().contains("42"), response.aiMessage().text());
    }

    @Test
    void aiServiceRunsTheToolForTheCityAndAnswersWithItsResult() {
        String answer = example.chatWithTools("What's the weather in Paris?");
        assertEquals(List.of("Paris"), example.weather.cities, "get_weather's calls");
        assertTrue(answer.contains("14°C and rainy"), answer);
    }
}
