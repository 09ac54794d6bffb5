package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.*;

import io.gossgpu.GossException;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What a reply is held to under each tool choice, and the choices that cannot be kept. */
class ReplyRulesTest {
    private static final Tool STRICT_ADD = new Tool("add", "Adds.", TestTools.ADD.parametersJson(), true);

    @Test
    void autoHoldsOnlyStrictToolsAndMayAnswer() {
        ReplyRules r = ReplyRules.of(null, List.of(TestTools.WEATHER, STRICT_ADD), ToolChoice.auto());
        assertNull(r.mustCall());
        assertEquals(Set.of("add"), r.arguments().keySet());
        assertNull(ReplyRules.of(null, List.of(TestTools.WEATHER), null).constraint(Set.of("get_weather")));
    }

    @Test
    void aNamedToolMustBeCalledWithArgumentsOfItsSchemaStrictOrNot() {
        ReplyRules r = ReplyRules.of(null, List.of(TestTools.WEATHER, STRICT_ADD), ToolChoice.function("get_weather"));
        assertEquals(Set.of("get_weather"), r.mustCall());
        assertEquals(
                TestTools.WEATHER.parametersJson(),
                r.arguments().get("get_weather").schema());
        assertNotNull(r.constraint(Set.of("get_weather", "add")));
    }

    @Test
    void requiredReachesEveryToolOffered() {
        Tool bare = new Tool("ping", "No arguments.", null);
        ReplyRules r =
                ReplyRules.of(ResponseFormat.jsonObject(), List.of(TestTools.WEATHER, bare), ToolChoice.required());
        assertEquals(Set.of("get_weather", "ping"), r.mustCall());
        assertEquals("json_object", r.arguments().get("ping").toString()); // arguments are JSON all the same
    }

    @Test
    void aSchemaTheEngineCannotEnforceHoldsAForcedCallToAJsonObject() {
        Tool odd = new Tool("odd", "", "{\"type\":\"object\",\"not\":{\"required\":[\"x\"]}}");
        ReplyRules r = ReplyRules.of(null, List.of(odd), ToolChoice.required());
        assertEquals("json_object", r.arguments().get("odd").toString());
    }

    @Test
    void aChoiceThatCannotBeKeptFailsBeforeTheReply() {
        GossException named = assertThrows(
                GossException.class,
                () -> ReplyRules.of(null, List.of(TestTools.ADD), ToolChoice.function("get_weather")));
        assertTrue(named.getMessage().contains("get_weather"), named.getMessage());
        assertThrows(GossException.class, () -> ReplyRules.of(null, List.of(), ToolChoice.required()));
        assertThrows(IllegalArgumentException.class, () -> new ToolChoice(false, "add"));
    }
}
