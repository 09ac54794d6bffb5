package io.gossgpu.model.safetensors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.gossgpu.GossException;
import io.gossgpu.model.DType;
import io.gossgpu.model.Json;
import io.gossgpu.testmodel.HfTensorLayout;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafetensorsWriterTest {
    @TempDir
    Path tmp;

    @Test
    void headerIsSpacePaddedJsonAndDataIsPackedInOrder() throws IOException {
        Path f = tmp.resolve("x.safetensors");
        SafetensorsFileWriter.write(
                f,
                List.of(
                        new SafetensorsFileWriter.Tensor("a", DType.BF16, new long[] {3}, s -> s.fill((byte) 1)),
                        new SafetensorsFileWriter.Tensor("b", DType.U8, new long[] {2, 5}, s -> s.fill((byte) 2)),
                        new SafetensorsFileWriter.Tensor("c", DType.F32, new long[] {1}, s -> s.fill((byte) 3))),
                Map.of("format", "pt"));
        byte[] b = Files.readAllBytes(f);
        int n = (int) ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
        assertEquals(0, n % 8);
        assertEquals(0, (8 + n) % SafetensorsFileWriter.DATA_ALIGN);
        String header = new String(b, 8, n, StandardCharsets.UTF_8);
        assertTrue(
                header.startsWith(
                        "{\"__metadata__\":{\"format\":\"pt\"},\"a\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[0,6]}"),
                header);
        assertTrue(header.stripTrailing().endsWith("}")
                && header.substring(header.stripTrailing().length()).isBlank());
        JsonNode h = Json.MAPPER.readTree(header);
        assertEquals("[6,16]", h.get("b").get("data_offsets").toString());
        assertEquals("[16,20]", h.get("c").get("data_offsets").toString());
        assertEquals(8 + n + 20, b.length);
        assertEquals(2, b[8 + n + 6]);
        assertEquals(3, b[b.length - 1]);
    }

    @Test
    void anInterruptedWriteLeavesNothingBehind() throws IOException {
        Path f = tmp.resolve("y.safetensors");
        Files.writeString(f, "old");
        assertThrows(
                IllegalStateException.class,
                () -> SafetensorsFileWriter.write(
                        f,
                        List.of(
                                new SafetensorsFileWriter.Tensor("a", DType.U8, new long[] {4}, s -> s.fill((byte) 1)),
                                new SafetensorsFileWriter.Tensor("b", DType.U8, new long[] {4}, s -> {
                                    throw new IllegalStateException("generator failed");
                                })),
                        Map.of()));
        assertEquals("old", Files.readString(f));
        try (Stream<Path> s = Files.list(tmp)) {
            assertEquals(List.of(f), s.toList());
        }
        assertThrows(
                GossException.class,
                () -> SafetensorsFileWriter.write(
                        f,
                        List.of(new SafetensorsFileWriter.Tensor("q", DType.Q8_0, new long[] {32}, s -> {})),
                        Map.of()));
        assertThrows(
                GossException.class,
                () -> SafetensorsFileWriter.write(
                        f,
                        List.of(
                                new SafetensorsFileWriter.Tensor("a", DType.U8, new long[] {1}, s -> {}),
                                new SafetensorsFileWriter.Tensor("a", DType.U8, new long[] {1}, s -> {})),
                        Map.of()));
    }

    @Test
    void hfLayoutNamesAndSplitsAsTransformersDoes() {
        TestModelGenerator g = new TestModelGenerator(TestModelPresets.tiny(), 1);
        List<HfTensorLayout.Part> parts = HfTensorLayout.of(g.config(), g.originalTensors());
        Map<String, HfTensorLayout.Part> byName = new java.util.HashMap<>();
        for (HfTensorLayout.Part p : parts) byName.put(p.name(), p);
        assertEquals(g.originalTensors().size() + 4 * g.config().numHiddenLayers(), parts.size());
        HfTensorLayout.Part k = byName.get("model.layers.1.self_attn.k_proj.weight");
        assertEquals("block.1.attn.qkv.weight", k.source().name());
        assertEquals(256, k.firstRow());
        assertEquals("[32, 96]", java.util.Arrays.toString(k.shape()));
        assertEquals(256L * 96 * 2, k.byteOffset());
        HfTensorLayout.Part vb = byName.get("model.layers.2.self_attn.v_proj.bias");
        assertEquals(288, vb.firstRow());
        assertEquals(288L * 2, vb.byteOffset());
        assertEquals(
                "[6, 320, 3, 16]",
                java.util.Arrays.toString(byName.get("model.layers.0.mlp.experts.gate_up_proj_blocks")
                        .shape()));
        assertEquals(
                "[6, 96, 5]",
                java.util.Arrays.toString(byName.get("model.layers.0.mlp.experts.down_proj_scales")
                        .shape()));
        for (String n : List.of(
                "model.embed_tokens.weight",
                "lm_head.weight",
                "model.norm.weight",
                "model.layers.0.input_layernorm.weight",
                "model.layers.0.post_attention_layernorm.weight",
                "model.layers.0.self_attn.sinks",
                "model.layers.0.self_attn.o_proj.bias",
                "model.layers.0.mlp.router.weight",
                "model.layers.0.mlp.router.bias",
                "model.layers.0.mlp.experts.gate_up_proj_bias",
                "model.layers.0.mlp.experts.down_proj_blocks",
                "model.layers.0.mlp.experts.down_proj_bias")) assertTrue(byName.containsKey(n), n);
        assertFalse(byName.containsKey("model.layers.0.self_attn.qkv_proj.weight"));
    }
}
