#!/usr/bin/env python3
"""A GGUF of gpt-oss-20b's shape with random weights, which llama.cpp and goss-gpu both load, for timing them.

usage: PYTHONPATH=LLAMA_SRC/gguf-py python3 benchmarks/scripts/synth_gguf.py OUT.gguf LAYERS [--seed N]

Written with gguf-py, the GGUF library of the llama.cpp checkout that llama-baseline.sh builds, so the file is laid
out as llama.cpp expects it: architecture "gpt-oss", MXFP4 experts (as ggml-org's published gpt-oss GGUFs), Q8_0
attention, embedding and output matrices, F32 norms, router, biases and sinks. Only the speed is meant to be real:
the weights are random bytes with finite scales (an MXFP4 block's shared exponent 2^-7 to 2^-5, a Q8_0 block's scale
1/256), and the vocabulary is 201088 placeholder strings with one placeholder merge (llama.cpp's BPE loader wants
the merges key; the benchmark feeds random token ids, so nothing is tokenized).
"""
import argparse

import numpy as np
import gguf

# gpt-oss-20b's widths (its config.json): hidden, heads, KV heads, head dim, expert width, experts, experts per token.
VOCAB, HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN, EXPERTS, USED = 201088, 2880, 64, 8, 64, 2880, 32, 4
Q8_0, MXFP4 = gguf.GGMLQuantizationType.Q8_0, gguf.GGMLQuantizationType.MXFP4


def q8_0(rng, rows, cols):
    """Rows of Q8_0 blocks as bytes: per 32 values an f16 scale, then 32 int8."""
    blocks = rng.integers(0, 256, size=(rows, cols // 32, 34), dtype=np.uint8)
    blocks[:, :, 0:2] = np.frombuffer(np.float16(1 / 256).tobytes(), dtype=np.uint8)
    return blocks.reshape(rows, cols // 32 * 34)


def mxfp4(rng, experts, rows, cols):
    """Each expert's rows of MXFP4 blocks as bytes: per 32 values an E8M0 exponent byte, then 16 bytes of FP4 pairs."""
    blocks = rng.integers(0, 256, size=(experts, rows, cols // 32, 17), dtype=np.uint8)
    blocks[:, :, :, 0] = rng.integers(120, 123, size=(experts, rows, cols // 32), dtype=np.uint8)  # 2^-7 .. 2^-5
    return blocks.reshape(experts, rows, cols // 32 * 17)


def small(rng, *shape):
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("layers", type=int)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)

    w = gguf.GGUFWriter(a.out, "gpt-oss")
    w.add_name(f"gpt-oss-20b-synth-L{a.layers}")
    w.add_block_count(a.layers)
    w.add_context_length(131072)
    w.add_embedding_length(HIDDEN)
    w.add_feed_forward_length(FFN)
    w.add_expert_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_key_length(HEAD_DIM)
    w.add_value_length(HEAD_DIM)
    w.add_rope_freq_base(150000.0)
    w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    w.add_rope_scaling_factor(32.0)
    w.add_rope_scaling_orig_ctx_len(4096)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_expert_count(EXPERTS)
    w.add_expert_used_count(USED)
    w.add_sliding_window(128)

    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-4o")
    tokens = [f"[{i}]" for i in range(VOCAB)]
    types = [gguf.TokenType.NORMAL] * VOCAB
    # o200k_harmony's special tokens at their ids, so that a reader that looks for them finds them
    for i, s in {199998: "<|startoftext|>", 199999: "<|endoftext|>", 200002: "<|return|>", 200005: "<|channel|>",
                 200006: "<|start|>", 200007: "<|end|>", 200008: "<|message|>", 200012: "<|call|>"}.items():
        tokens[i], types[i] = s, gguf.TokenType.CONTROL
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(["[ 1]"])
    w.add_bos_token_id(199998)
    w.add_eos_token_id(200002)

    q, kv = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    # numpy shapes are ggml's dimensions reversed; a quantized tensor is given as its bytes (gguf-py works out its shape)
    w.add_tensor("token_embd.weight", q8_0(rng, VOCAB, HIDDEN), raw_dtype=Q8_0)
    for n in range(a.layers):
        p = f"blk.{n}."
        w.add_tensor(p + "attn_norm.weight", np.ones(HIDDEN, dtype=np.float32))
        for name, rows in (("attn_q", q), ("attn_k", kv), ("attn_v", kv)):
            w.add_tensor(p + name + ".weight", q8_0(rng, rows, HIDDEN), raw_dtype=Q8_0)
            w.add_tensor(p + name + ".bias", small(rng, rows))
        w.add_tensor(p + "attn_output.weight", q8_0(rng, HIDDEN, q), raw_dtype=Q8_0)
        w.add_tensor(p + "attn_output.bias", small(rng, HIDDEN))
        w.add_tensor(p + "attn_sinks.weight", small(rng, HEADS))
        w.add_tensor(p + "post_attention_norm.weight", np.ones(HIDDEN, dtype=np.float32))
        w.add_tensor(p + "ffn_gate_inp.weight", small(rng, EXPERTS, HIDDEN))
        w.add_tensor(p + "ffn_gate_inp.bias", small(rng, EXPERTS))
        w.add_tensor(p + "ffn_gate_exps.weight", mxfp4(rng, EXPERTS, FFN, HIDDEN), raw_dtype=MXFP4)
        w.add_tensor(p + "ffn_gate_exps.bias", small(rng, EXPERTS, FFN))
        w.add_tensor(p + "ffn_up_exps.weight", mxfp4(rng, EXPERTS, FFN, HIDDEN), raw_dtype=MXFP4)
        w.add_tensor(p + "ffn_up_exps.bias", small(rng, EXPERTS, FFN))
        w.add_tensor(p + "ffn_down_exps.weight", mxfp4(rng, EXPERTS, HIDDEN, FFN), raw_dtype=MXFP4)
        w.add_tensor(p + "ffn_down_exps.bias", small(rng, EXPERTS, HIDDEN))
    w.add_tensor("output_norm.weight", np.ones(HIDDEN, dtype=np.float32))
    w.add_tensor("output.weight", q8_0(rng, VOCAB, HIDDEN), raw_dtype=Q8_0)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
