package io.gossgpu.model.gguf;

import java.util.List;

/**
 * A metadata value to write, with its GGUF type. Scalars hold a {@link Number}, {@link Boolean} or
 * {@link String}; arrays hold an {@link Array}, whose items are plain values of its element type
 * (or {@code GgufValue}s of type ARRAY for nested arrays).
 */
public record GgufValue(GgufValueType type, Object value) {

    public record Array(GgufValueType elementType, List<?> items) {}

    public static GgufValue string(String s) {
        return new GgufValue(GgufValueType.STRING, s);
    }

    public static GgufValue u32(long v) {
        return new GgufValue(GgufValueType.UINT32, v);
    }

    public static GgufValue f32(float v) {
        return new GgufValue(GgufValueType.FLOAT32, v);
    }

    public static GgufValue array(GgufValueType elementType, List<?> items) {
        return new GgufValue(GgufValueType.ARRAY, new Array(elementType, items));
    }
}
