// Generates parity.jsonl: deterministic (seeded) test strings and the token ids that OpenAI's tiktoken
// (npm package "tiktoken", the WASM build of the Rust core) gives for them with o200k_base ranks.
//   mode "ordinary": encode_ordinary(text) (special-token strings are plain text)
//   mode "specials": encode(text, "all") with the o200k_harmony special tokens added
// Run once, outside the repository:  mkdir /tmp/tok && cd /tmp/tok && npm install tiktoken
//   NODE_PATH=/tmp/tok/node_modules node make-parity-fixture.mjs > parity.jsonl
import { createRequire } from "module";
const require = createRequire(process.env.NODE_PATH ? process.env.NODE_PATH + "/" : import.meta.url);
const { Tiktoken } = require("tiktoken/lite");
const o200k = require("tiktoken/encoders/o200k_base.json");

const specials = { "<|startoftext|>": 199998, "<|endoftext|>": 199999, "<|return|>": 200002,
  "<|constrain|>": 200003, "<|channel|>": 200005, "<|start|>": 200006, "<|end|>": 200007,
  "<|message|>": 200008, "<|call|>": 200012, "<|endofprompt|>": 200018 };
for (const id of [200000, 200001, 200004, 200009, 200010, 200011]) specials[`<|reserved_${id}|>`] = id;
for (let id = 200013; id < 201088; id++) if (id !== 200018) specials[`<|reserved_${id}|>`] = id;
const enc = new Tiktoken(o200k.bpe_ranks, specials, o200k.pat_str);

// mulberry32
let seed = 0x60551234;
function rnd() { seed |= 0; seed = (seed + 0x6D2B79F5) | 0; let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; }
const ri = (n) => Math.floor(rnd() * n);
const pick = (a) => a[ri(a.length)];
const range = (lo, hi) => String.fromCodePoint(lo + ri(hi - lo + 1));

const hand = [
  "", " ", "  ", "\n", "\r\n", "\t", "Hello, world!", "hello world", " Hello", "HELLO WORLD",
  "I'm you're he's they've we'll she'd I'M YOU'RE HE'S THEY'VE WE'LL SHE'D", "don't DON'T Don'T",
  "x'ſ X'ſ it'ſ", "'s 's's ''s", "1", "12", "123", "1234", "12345678901234567890", "3.14159 2,718 1e-9 0x1F",
  "１２３４５ ٣٤٥ ४५६ 一二三", "    leading spaces", "trailing spaces    ", "a    b", "a\n\n\nb", "a \n \n b",
  " ".repeat(1000), "\n".repeat(300), " \t".repeat(200) + "x", "x" + " ".repeat(5000) + "y",
  "9".repeat(3000), "a".repeat(4000), "ab".repeat(2000), "ﷺ".repeat(50), "日本語".repeat(500),
  "你好，世界！这是一个测试。", "こんにちは、世界。カタカナとひらがな", "안녕하세요 세계", "Привет, мир! Ёжик",
  "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया क्षत्रिय", "สวัสดีชาวโลก", "Γειά σου Κόσμε", "Ünïcödé çãfé naïve résumé",
  "e\u0301 a\u0308 n\u0303 \u0915\u094D\u0937", "😀😃😄 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ 🇩🇪🇯🇵", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟘𝟙𝟚 𐍈",
  "def f(x):\n    return x**2  # square\n", "for (int i = 0; i < n; i++) { a[i] += b[i] * 2; }",
  "<html><body class=\"x\">Hi &amp; bye</body></html>", "{\"key\": [1, 2, 3], \"nested\": {\"a\": null}}",
  "https://example.com/path/to/file.html?q=1&r=two#frag", "C:\\Users\\name\\file.txt", "/usr/local/bin//",
  "SELECT * FROM users WHERE id = 42;", "$x = @array[-1]; %hash{'k'} ~= s/foo/bar/g;",
  "<|start|>user<|message|>hi<|end|>", "<|endoftext|>", "<|reserved_200100|> <|reserved_201087|> <|reserved_201088|>",
  "<|start|>assistant<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>",
  "<|endofprompt|><|reserved_200018|><|call|><|constrain|>json", "<|start|", "|start|>", "<<|end|>>",
  "\uD800", "\uDC00", "a\uD83Db", "\uDE00x\uD83D", "\uD83D\uDE00\uD83D", "ok\uDBFF\uDFFF\uDBFF",
  "\u00a0\u00a0x\u3000y\u2028z\u2029", "\u200b\u200c\u200d\ufeff", "\u0000\u0001\u001f\u007f", "tab\there\vvt\fff",
  "!!!???...,,,;;;", " !@#$%^&*()_+-=[]{}|;':\",./<>?`~", "...\n\n", "//\n//\r\n/\n", "a/b/c\n/d",
  "MixedCASEWordsHereAndTHERE", "camelCaseVariableName snake_case_name SCREAMING_CASE", "ǅungla ǈj ǋ",
];

const pools = [
  () => range(0x61, 0x7a), () => range(0x41, 0x5a), () => range(0x30, 0x39), () => pick(" ,.;:!?'\"()-_/\\@#$%&*+=<>[]{}|~`^"),
  () => pick([" ", " ", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2028", "\r", "\n\n"]),
  () => range(0x4e00, 0x9fff), () => range(0x3040, 0x30ff), () => range(0xac00, 0xd7a3), () => range(0x0400, 0x04ff),
  () => range(0x0600, 0x06ff), () => range(0x0900, 0x097f), () => range(0x0300, 0x036f), () => range(0x00c0, 0x024f),
  () => range(0x1f300, 0x1faff), () => pick(["\u200d", "\ufe0f", "\u{1f3fb}", "\u{1f3ff}"]), () => range(0x0370, 0x03ff),
  () => range(0x0e00, 0x0e7f), () => range(0x05d0, 0x05ea), () => range(0xff01, 0xff5e), () => range(0x2000, 0x206f),
  () => range(0x10000, 0x10ffff), () => range(0x0080, 0x00ff), () => pick(["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "'Re"]),
  () => pick(["<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|return|>", "<|call|>", "<|endoftext|>", "<|reserved_200500|>", "<|constrain|>"]),
  () => pick(["\uD800", "\uDBFF", "\uDC00", "\uDFFF", "\uD83D"]),
  () => range(0x0660, 0x0669), () => range(0x2160, 0x2188), () => range(0x1d400, 0x1d7ff),
];
const words = ["the", "The", "of", "and", "to", "in", "is", "it", "you", "that", "was", "for", "on", "are", "with",
  "as", "I", "his", "they", "be", "at", "one", "have", "this", "from", "Hello", "WORLD", "model", "token", "Tokenizer",
  "über", "naïve", "日本", "中文", "данные", "données", "niño", "Straße", "42", "2024", "3.14", "1,000,000", "x86_64",
  "don't", "I'm", "we're", "they've", "she'll", "he'd", "IT'S", "HTML5", "iPhone", "McDonald's", "e-mail", "co-op"];
const codeBits = ["if (x) {", "}", "return", "\tfoo(bar, baz);", "    ", "self.x = x", "def ", "class A:", "=>", "->",
  "!==", "&&", "||", "::", "<T>", "[0]", "// comment", "/* block */", "#include <stdio.h>", "print(f\"{x!r}\")", "\n"];

const out = [];
for (const t of hand) { out.push([t, "ordinary"]); out.push([t, "specials"]); }
for (let i = 0; i < 1500; i++) {           // random characters from 1..4 pools
  const ps = []; const k = 1 + ri(4); for (let j = 0; j < k; j++) ps.push(pick(pools));
  const len = 1 + ri(i % 10 === 0 ? 400 : 60); let s = "";
  for (let j = 0; j < len; j++) s += pick(ps)();
  out.push([s, i % 5 === 0 ? "specials" : "ordinary"]);
}
for (let i = 0; i < 1000; i++) {           // word salad with random separators and case changes
  const len = 1 + ri(40); let s = "";
  for (let j = 0; j < len; j++) {
    let w = pick(words); const r = rnd();
    if (r < 0.1) w = w.toUpperCase(); else if (r < 0.15) w = w.toLowerCase();
    s += w + pick([" ", " ", " ", "  ", ", ", ". ", "\n", "\n\n", "", "'", "-", "/", "   \n", " \t "]);
    if (rnd() < 0.05) s += String(ri(1e9));
  }
  out.push([s, "ordinary"]);
}
for (let i = 0; i < 400; i++) {            // code-ish
  const len = 1 + ri(50); let s = "";
  for (let j = 0; j < len; j++) s += pick(codeBits) + (rnd() < 0.3 ? pick(words) : "") + pick([" ", "", "\n", "\n    ", "\n\t\t"]);
  out.push([s, "ordinary"]);
}
for (let i = 0; i < 100; i++) {            // long runs of one class
  const unit = pick([" ", "\n", "\t", "0", "7", "a", "Z", "-", "=", "日", "😀", " \n", "ab ", "\u00a0"]);
  out.push([pick(words) + unit.repeat(1 + ri(2000)) + pick(words), "ordinary"]);
}
for (const [text, mode] of out) {
  const ids = mode === "specials" ? enc.encode(text, "all") : enc.encode_ordinary(text);
  process.stdout.write(JSON.stringify({ mode, text, ids: Array.from(ids) }) + "\n");
}
enc.free();
