package io.gossgpu.model.gguf;

/**
 * GGUF metadata value types (gguf spec, {@code gguf_metadata_value_type}) and the plain Java value
 * each one reads as: unsigned integers widen to the next signed Java type that holds every value
 * (UINT64 stays a {@code Long} holding the same 64 bits), arrays read as {@code List}.
 */
public enum GgufValueType {
    UINT8(0, 1),
    INT8(1, 1),
    UINT16(2, 2),
    INT16(3, 2),
    UINT32(4, 4),
    INT32(5, 4),
    FLOAT32(6, 4),
    BOOL(7, 1),
    STRING(8, 8),
    ARRAY(9, 12),
    UINT64(10, 8),
    INT64(11, 8),
    FLOAT64(12, 8);

    private final int id;
    private final int minBytes;

    GgufValueType(int id, int minBytes) {
        this.id = id;
        this.minBytes = minBytes;
    }

    public int id() {
        return id;
    }

    /** The fewest bytes a value of this type takes in a file (a string's or array's header alone). */
    int minBytes() {
        return minBytes;
    }

    /** The type with file id {@code id}, or null when there is none. */
    public static GgufValueType byId(long id) {
        for (GgufValueType t : values()) if (t.id == id) return t;
        return null;
    }
}
