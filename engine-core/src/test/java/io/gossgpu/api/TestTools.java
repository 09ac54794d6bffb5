package io.gossgpu.api;

/** The tools the api tests offer the demo model, declared once (it calls get_weather for a city and add for sums). */
final class TestTools {
    private TestTools() {}

    static final String WEATHER_NAME = "get_weather", WEATHER_DESCRIPTION = "Gets the current weather in a city.";

    static final Tool WEATHER = weather(
            "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"description\":\"The city name\"}},\"required\":[\"city\"]}",
            false);

    static final Tool ADD = new Tool(
            "add",
            "Adds two numbers.",
            "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}},\"required\":[\"a\",\"b\"]}");

    /** get_weather with {@code parametersJson}, strict or not. */
    static Tool weather(String parametersJson, boolean strict) {
        return new Tool(WEATHER_NAME, WEATHER_DESCRIPTION, parametersJson, strict);
    }
}
