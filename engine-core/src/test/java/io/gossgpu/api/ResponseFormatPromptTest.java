package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.*;

import io.gossgpu.ReasoningEffort;
import io.gossgpu.harmony.DeveloperContent;
import io.gossgpu.harmony.HarmonyRenderer;
import io.gossgpu.harmony.Message;
import io.gossgpu.harmony.SystemContent;
import java.time.LocalDate;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The prompt of a reply with a response format shows the schema in the developer message, as Harmony expects. */
class ResponseFormatPromptTest {
    static final String SCHEMA = """
            {"type":"object",
             "properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}""";
    static final String ONE_LINE =
            "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"],\"additionalProperties\":false}";
    final HarmonyRenderer renderer = new HarmonyRenderer();
    final Message system = Message.system(SystemContent.defaults(LocalDate.of(2026, 1, 1), ReasoningEffort.LOW));

    private String prompt(List<Message> conversation, ResponseFormat f) {
        return renderer.renderForCompletionText(Chat.promptMessages(conversation, f));
    }

    @Test
    void theSchemaJoinsTheDeveloperMessage() {
        List<Message> c =
                List.of(system, Message.developer(DeveloperContent.instructions("Be brief.")), Message.user("Where?"));
        String p = prompt(c, ResponseFormat.jsonSchema("city", "Where the user is.", SCHEMA));
        assertTrue(
                p.contains(
                        "<|start|>developer<|message|># Instructions\n\nBe brief.\n\n# Response Formats\n\n## city\n\n"
                                + "// Where the user is.\n" + ONE_LINE
                                + "<|end|><|start|>user<|message|>Where?<|end|><|start|>assistant"),
                p);
    }

    @Test
    void aDeveloperMessageIsAddedAfterTheSystemMessageWhenThereIsNone() {
        List<Message> c = List.of(system, Message.user("Where?"));
        String p = prompt(c, ResponseFormat.jsonSchema(SCHEMA));
        String sys = renderer.renderForCompletionText(List.of(system, Message.user("Where?")));
        String head = sys.substring(0, sys.indexOf("<|start|>user"));
        assertTrue(
                p.startsWith(head + "<|start|>developer<|message|># Response Formats\n\n## response\n\n" + ONE_LINE
                        + "<|end|><|start|>user<|message|>Where?"),
                p);
    }

    @Test
    void formatsWithoutASchemaLeaveThePromptAlone() {
        List<Message> c = List.of(system, Message.user("Where?"));
        assertSame(c, Chat.promptMessages(c, null));
        assertSame(c, Chat.promptMessages(c, ResponseFormat.jsonObject()));
        assertSame(c, Chat.promptMessages(c, ResponseFormat.gbnf("root ::= \"a\"")));
    }

    @Test
    void recordFormatsAreNamedAfterTheRecord() {
        record City(String name, int population) {}
        RecordFormat<City> f = RecordFormat.of(City.class);
        assertEquals("City", f.responseFormat().name());
        assertTrue(prompt(List.of(system, Message.user("x")), f.responseFormat())
                .contains("# Response Formats\n\n## City\n\n{"));
    }
}
