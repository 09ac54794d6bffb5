// Prints the SHA-256 of the o200k_base vocabulary as tiktoken (npm "tiktoken") holds it: for every id
// 0..199997 in order, a 2-byte big-endian length followed by the token's bytes.
//   NODE_PATH=/tmp/tok/node_modules node vocab-hash.mjs > vocab-sha256.txt
import { createRequire } from "module";
import { createHash } from "crypto";
const require = createRequire(process.env.NODE_PATH ? process.env.NODE_PATH + "/" : import.meta.url);
const { Tiktoken } = require("tiktoken/lite");
const o200k = require("tiktoken/encoders/o200k_base.json");
const enc = new Tiktoken(o200k.bpe_ranks, o200k.special_tokens, o200k.pat_str);
const h = createHash("sha256");
for (let id = 0; id < 199998; id++) {
  const b = enc.decode_single_token_bytes(id);
  h.update(Buffer.from([b.length >> 8, b.length & 255]));
  h.update(Buffer.from(b));
}
process.stdout.write(h.digest("hex") + "\n");
enc.free();
