package io.gossgpu.model.gguf;

import java.util.List;
import java.util.Map;

/**
 * Everything in front of a GGUF file's tensor data, parsed and checked.
 *
 * @param metadata   key → plain Java value (see {@link GgufValueType}), in file order
 * @param types      key → the value's GGUF type
 * @param tensors    in file order
 * @param dataOffset absolute file offset of the (aligned) data section
 */
record GgufHeader(
        int version,
        Map<String, Object> metadata,
        Map<String, GgufValueType> types,
        List<GgufTensorInfo> tensors,
        int alignment,
        long dataOffset) {}
