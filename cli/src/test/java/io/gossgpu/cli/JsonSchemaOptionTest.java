package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gossgpu.demo.DemoCheckpoint;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code run --json-schema FILE} on the demo model: the answer printed is JSON of the schema; bad use is one line. */
class JsonSchemaOptionTest {
    @TempDir
    Path dir;

    @Test
    void theAnswerFollowsTheSchemaFile() throws Exception {
        Path model = DemoCheckpoint.unpack(Path.of(System.getProperty("java.io.tmpdir"), "goss-gpu-tests"));
        Path schema = Files.writeString(dir.resolve("city.json"), """
                {"type":"object","properties":{"city":{"type":"string","maxLength":20},"big":{"type":"boolean"},
                 "rank":{"type":"integer"}},"required":["city","big","rank"],"additionalProperties":false}""");
        CommandLineTest.Run r = CommandLineTest.run(
                "",
                "--model",
                model.toString(),
                "--backend",
                "cpu",
                "--seed",
                "2",
                "-n",
                "400",
                "--hide-reasoning",
                "--prompt",
                "What is the capital of France?",
                "--json-schema",
                schema.toString());
        assertEquals(0, r.code(), r.err());
        JsonNode answer = new ObjectMapper().readTree(r.out().strip());
        assertTrue(answer.get("city").isTextual() && answer.get("city").asText().length() <= 20, r.out());
        assertTrue(answer.get("big").isBoolean(), r.out());
        assertTrue(answer.get("rank").isIntegralNumber(), r.out());
        assertEquals(3, answer.size(), r.out());
    }

    @Test
    void badUseIsOneLine() throws Exception {
        Path model = DemoCheckpoint.unpack(Path.of(System.getProperty("java.io.tmpdir"), "goss-gpu-tests"));
        CommandLineTest.Run missing = CommandLineTest.run(
                "",
                "--model",
                model.toString(),
                "--prompt",
                "hi",
                "--json-schema",
                dir.resolve("nope.json").toString());
        assertEquals(1, missing.code());
        assertTrue(missing.err().strip().startsWith("goss-gpu: cannot read the JSON schema "), missing.err());
        Path bad = Files.writeString(
                dir.resolve("bad.json"),
                "{\"type\":\"string\",\"pattern\":\"(?=a)a+\"}"); // lookahead: outside the subset
        CommandLineTest.Run unsupported =
                CommandLineTest.run("", "--model", model.toString(), "--prompt", "hi", "--json-schema", bad.toString());
        assertEquals(1, unsupported.code());
        assertTrue(
                unsupported.err().strip().startsWith("goss-gpu: the JSON schema's pattern at # uses '(?'"),
                unsupported.err());
        assertEquals(1, unsupported.err().strip().lines().count(), unsupported.err());
        CommandLineTest.Run raw = CommandLineTest.run(
                "", "--model", model.toString(), "--raw", "--prompt", "hi", "--json-schema", bad.toString());
        assertEquals(1, raw.code());
        assertEquals(
                "goss-gpu: --json-schema needs the chat format; it cannot go with --raw",
                raw.err().strip());
    }
}
