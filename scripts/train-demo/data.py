"""The demo model's conversations: task families a model of a few million parameters can learn on a CPU in an hour.

Writes Harmony conversations as JSON lines in the form `goss-gpu render` reads (io.gossgpu.harmony.ConversationJson):
train.jsonl ends every conversation with the assistant turn to learn; heldout.jsonl holds evaluation items: the
messages up to the user's question, the family, and what a correct reply contains (for tool families, the call
expected, the tool's result to give back and the answer after it).

Held-out means: user phrasings and developer instructions never used in training (new sentences made of words the
training data uses, so that no token of a question is one the model has never seen), on the inputs below.
  add           pairs (a, b) of 0..99 that never occur in training (nor does 17 + 25, the README's question)
  reverse/count/uppercase  word lists drawn afresh (new combinations of the generator's words)
  convert, capital, element  facts of the generator's tables (all seen in training), asked in new words
  weather/tool_add  new phrasings and new tool results (temperatures, conditions, sums) to report
  multi_turn    a second question after a first exchange, both drawn as above

    python3 data.py --seed 1 --train 40000 --heldout 20 --out DIR
"""
import argparse
import datetime
import json
import random

WORDS = ["apple", "river", "stone", "cloud", "green", "house", "light", "music", "paper", "table",
         "water", "bread", "chair", "dream", "earth", "fire", "glass", "heart", "horse", "lemon",
         "money", "night", "ocean", "plant", "queen", "radio", "smile", "storm", "tiger", "train",
         "voice", "world", "bird", "book", "cat", "dog", "fish", "moon", "rain", "star"]

CAPITALS = {"France": "Paris", "Germany": "Berlin", "Italy": "Rome", "Spain": "Madrid", "Japan": "Tokyo",
            "China": "Beijing", "India": "New Delhi", "Canada": "Ottawa", "Australia": "Canberra", "Brazil": "Brasilia",
            "Egypt": "Cairo", "Russia": "Moscow", "Mexico": "Mexico City", "Kenya": "Nairobi", "Norway": "Oslo",
            "Sweden": "Stockholm", "Poland": "Warsaw", "Greece": "Athens", "Portugal": "Lisbon", "Ireland": "Dublin",
            "Austria": "Vienna", "Peru": "Lima", "Chile": "Santiago", "Turkey": "Ankara", "Thailand": "Bangkok"}

ELEMENTS = {"hydrogen": "H", "helium": "He", "lithium": "Li", "carbon": "C", "nitrogen": "N", "oxygen": "O",
            "sodium": "Na", "magnesium": "Mg", "aluminium": "Al", "silicon": "Si", "sulfur": "S", "chlorine": "Cl",
            "potassium": "K", "calcium": "Ca", "iron": "Fe", "copper": "Cu", "zinc": "Zn", "silver": "Ag",
            "tin": "Sn", "gold": "Au", "mercury": "Hg", "lead": "Pb", "uranium": "U", "neon": "Ne", "nickel": "Ni"}

# (from, to, factor): conversions of whole numbers 1..12
CONVERSIONS = [("km", "m", 1000), ("m", "cm", 100), ("kg", "g", 1000), ("hours", "minutes", 60),
               ("minutes", "seconds", 60), ("feet", "inches", 12), ("days", "hours", 24), ("weeks", "days", 7)]

CITIES = ["Paris", "London", "Berlin", "Rome", "Madrid", "Tokyo", "Cairo", "Oslo", "Lima", "Dublin",
          "Vienna", "Athens", "Lisbon", "Moscow", "Toronto", "Sydney", "Chicago", "Boston", "Seattle", "Mumbai",
          "Nairobi", "Bangkok", "Warsaw", "Prague", "Zurich"]
CONDITIONS = ["sunny", "cloudy", "rainy", "windy", "snowy", "foggy"]

# Phrasings: [train..., held-out...]; the split index says where held-out ones start.
PHRASES = {
    "add": (["What is {a} + {b}?", "What is {a} plus {b}?", "Add {a} and {b}.", "Compute {a} + {b}.", "{a} + {b} = ?",
             "What do you get when you add {a} and {b}?", "Please add {a} and {b}.", "Calculate the sum of {a} and {b}.",
             "what is {a}+{b}", "Find {a} + {b}.", "Add {a} to {b}.", "What is the total of {a} and {b}?"],
            ["What is the sum of {a} and {b}?", "What do you get when you add {a} plus {b}?"]),
    "convert": (["How many {to} are in {n} {frm}?", "Convert {n} {frm} to {to}.", "What is {n} {frm} in {to}?",
                 "{n} {frm} is how many {to}?", "Please convert {n} {frm} into {to}.",
                 "Change {n} {frm} into {to}.", "I have {n} {frm}. How many {to} is that?"],
                ["How many {to} is {n} {frm}?", "How many {to} are there in {n} {frm}?"]),
    "reverse": (["Reverse the order of these words: {w}", "Reverse the words: {w}", "Write these words backwards: {w}",
                 "Put these words in reverse order: {w}", "Reverse this list: {w}", "Give me these words in reverse: {w}",
                 "Please reverse these words: {w}", "Reverse the order of the list: {w}", "Write the list backwards: {w}",
                 "Can you reverse these words: {w}", "Now reverse the words: {w}", "Please put the words in reverse order: {w}",
                 "List the words in reverse order: {w}", "I need these words reversed: {w}", "Please reverse this list: {w}"],
                ["Please reverse the order of the words: {w}", "Write the words in reverse order: {w}"]),
    "count": (["How many words are in: {w}", "Count the words: {w}", "How many words does this have: {w}",
               "Count how many words there are: {w}", "How many words do you see here: {w}",
               "Give the number of words: {w}", "Please count these words: {w}", "Please count the words in: {w}",
               "How many words are in this list: {w}"],
              ["Count the number of words in: {w}", "How many words are there in: {w}"]),
    "uppercase": (["Write in capital letters: {w}", "Uppercase these words: {w}", "Convert to upper case: {w}",
                   "Make these words uppercase: {w}", "Write these words in upper case: {w}",
                   "Give me these words in capitals: {w}", "Turn these words into capital letters: {w}"],
                  ["Write these words in capital letters: {w}", "Please convert these words to upper case: {w}"]),
    "capital": (["What is the capital of {x}?", "Which city is the capital of {x}?", "Name the capital of {x}.",
                 "What's the capital city of {x}?", "capital of {x}?",
                 "What city is the capital of {x}?", "Give the capital of {x}."],
                ["Please name the capital city of {x}.", "Which city is the capital city of {x}?"]),
    "element": (["What is the chemical symbol for {x}?", "What is the symbol of {x}?", "Give the element symbol of {x}.",
                 "Which symbol stands for {x}?", "symbol for {x}?",
                 "What is the element symbol for {x}?", "Name the chemical symbol of {x}."],
                ["Which chemical symbol does {x} have?", "Please name the symbol for {x}."]),
    "weather": (["What's the weather in {c}?", "What is the weather like in {c}?", "How is the weather in {c} today?",
                 "Tell me the weather for {c}.", "Is it sunny in {c}?",
                 "Give me the weather in {c}.", "What is the weather in {c} like?"],
                ["What is the weather in {c} today?", "How is the weather like in {c}?"]),
}

INSTRUCTIONS = (["Answer briefly.", "You are a helpful assistant.", "Be concise and accurate.", "Reply in plain English.",
                 "You are a friendly assistant.", "Keep answers short."],
                ["Be concise and friendly.", "You are a helpful and friendly assistant."])

TOOL_WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Gets the current weather in a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city name"}},
                               "required": ["city"]}}}
TOOL_ADD = {"type": "function", "function": {"name": "add", "description": "Adds two numbers.",
            "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                           "required": ["a", "b"]}}}

README_PAIRS = {(17, 25)}  # asked in the README: never trained on


class Gen:
    def __init__(self, rnd, heldout):
        self.r = rnd
        self.heldout = heldout

    def phrase(self, family, **kw):
        train, held = PHRASES[family]
        return self.r.choice(held if self.heldout else train).format(**kw)

    def words(self, lo, hi):
        return self.r.sample(WORDS, self.r.randint(lo, hi))

    # Each task returns (user text, analysis, final, answer): the answer is what a correct final must contain.
    def add(self):
        while True:
            a, b = self.r.randint(0, 99), self.r.randint(0, 99)
            if is_heldout_pair(a, b) == self.heldout:
                break
        return self.phrase("add", a=a, b=b), add_reasoning(a, b), f"{a} + {b} = {a + b}.", str(a + b)

    def convert(self):
        frm, to, k = self.r.choice(CONVERSIONS)
        n = self.r.randint(1, 12)
        return (self.phrase("convert", n=n, frm=frm, to=to), f"1 {one(frm)} is {k} {to}, so {n} {frm} is {n} × {k} = {n * k} {to}.",
                f"{n} {frm} is {n * k} {to}.", f"is {n * k} {to}.")

    def reverse(self):
        w = self.words(2, 4)
        back = list(reversed(w))
        # The answer repeats the end of the reasoning word for word: a copy the model learns early.
        return (self.phrase("reverse", w=" ".join(w)), f"The words are {', '.join(w)}. Reversed: {' '.join(back)}.",
                f"Reversed: {' '.join(back)}", " ".join(back))

    def count(self):
        w = self.words(1, 7)
        steps = ", ".join(f"{x} {i + 1}" for i, x in enumerate(w))
        n = len(w)
        return (self.phrase("count", w=" ".join(w)), f"Counting: {steps}. That is {n}.",
                f"There {'is 1 word' if n == 1 else f'are {n} words'}.", f"{n} word")

    def uppercase(self):
        # At most three words: each next capital word is found by matching the one just written, in other letters, to
        # its place in the list, and a model of this size got lists of four words wrong in an earlier run.
        w = self.words(1, 3)
        up = " ".join(x.upper() for x in w)
        # The words first, then in capitals (each the capitals of the word at the same place in the list), and the
        # answer repeats that: the reasoning starts and the answer is a plain copy, as with the other families.
        return (self.phrase("uppercase", w=" ".join(w)), f"The words are {' '.join(w)}. In capitals: {up}.", f"In capitals: {up}", up)

    def capital(self):
        x = self.r.choice(list(CAPITALS))
        c = CAPITALS[x]
        return self.phrase("capital", x=x), f"{x}'s capital is {c}.", f"The capital of {x} is {c}.", c

    def element(self):
        x = self.r.choice(list(ELEMENTS))
        s = ELEMENTS[x]
        return self.phrase("element", x=x), f"The symbol of {x} is {s}.", f"The chemical symbol for {x} is {s}.", f"is {s}."

    def system(self):
        d = datetime.date(2025, 1, 1) + datetime.timedelta(days=self.r.randint(0, 6 * 365))
        return {"role": "system", "reasoning_effort": self.r.choice(["low", "medium", "high"]), "current_date": d.isoformat()}

    def developer(self, tools, p):
        instr = self.r.choice(INSTRUCTIONS[1 if self.heldout else 0]) if self.r.random() < p else None
        if instr is None and not tools:
            return []
        m = {"role": "developer"}
        if instr:
            m["instructions"] = instr
        if tools:
            m["tools"] = tools
        return [m]


PLAIN = ["add", "convert", "reverse", "count", "uppercase", "capital", "element"]


def one(unit):
    return {"hours": "hour", "minutes": "minute", "feet": "foot", "days": "day", "weeks": "week"}.get(unit, unit)


def add_reasoning(a, b):
    """Column addition, units then tens: every step is a one-digit sum the model can learn once for all pairs."""
    u = a % 10 + b % 10
    carry = u // 10
    first = f"{a % 10} + {b % 10} = {u}" + (", carry 1." if carry else ".")
    t = a // 10 + b // 10 + carry
    second = f"{a // 10} + {b // 10}" + (" + 1" if carry else "") + f" = {t}."
    return f"{first} {second} So {a} + {b} = {a + b}."


def is_heldout_pair(a, b):
    """About one pair in ten is kept for evaluation (a fixed hash, so train and held-out sets never share a pair)."""
    return (a, b) in README_PAIRS or random.Random(a * 100 + b).random() < 0.1


def plain(g, family, tools_offered=None):
    user, analysis, final, answer = getattr(g, family)()
    msgs = [g.system()] + g.developer(tools_offered, 0.3)
    msgs.append({"role": "user", "content": user})
    return msgs, analysis, final, answer


def weather_result(g, city):
    t = g.r.randint(-10, 35)
    c = g.r.choice(CONDITIONS)
    return json.dumps({"city": city, "temperature_c": t, "condition": c}, separators=(",", ":")), f"{t}°C and {c}"


def tool_episode(g, kind):
    """The call and, separately, the answer after the tool's result: (prompt messages, analysis, call, result, analysis2, final, answer)."""
    tools = [TOOL_WEATHER, TOOL_ADD] if g.r.random() < 0.5 else ([TOOL_WEATHER] if kind == "weather" else [TOOL_ADD])
    g.r.shuffle(tools)
    msgs = [g.system()] + g.developer(tools, 0.3)
    if kind == "weather":
        c = g.r.choice(CITIES)
        msgs.append({"role": "user", "content": g.phrase("weather", c=c)})
        analysis = f"The user asks about the weather in {c}. I will call get_weather."
        call = {"name": "get_weather", "arguments": json.dumps({"city": c}, separators=(",", ":"))}
        result, said = weather_result(g, c)
        analysis2 = f"The tool says {said}."
        final = f"It is {said} in {c}."
        answer = said
    else:
        while True:
            a, b = g.r.randint(0, 99), g.r.randint(0, 99)
            if is_heldout_pair(a, b) == g.heldout:
                break
        msgs.append({"role": "user", "content": g.phrase("add", a=a, b=b)})
        analysis = f"The user wants {a} + {b}. I will call add."
        call = {"name": "add", "arguments": json.dumps({"a": a, "b": b}, separators=(",", ":"))}
        result = str(a + b)
        analysis2 = f"The tool returned {a + b}."
        final = f"{a} + {b} = {a + b}."
        answer = str(a + b)
    return msgs, analysis, call, result, analysis2, final, answer


def assistant(analysis, final):
    return [{"role": "assistant", "channel": "analysis", "content": analysis},
            {"role": "assistant", "channel": "final", "content": final}]


def train_examples(g, n):
    """n training conversations: plain questions (tools offered or not), tool calls and their follow-ups, two-turn chats."""
    out = []
    kinds = PLAIN + ["weather_call", "weather_answer", "add_call", "add_answer", "multi_turn"]
    weights = [3, 1, 1.6, 1.2, 2, 1, 1, 0.8, 0.8, 0.6, 0.6, 1.2]  # uppercase and reverse more often: the slowest to learn
    while len(out) < n:
        k = g.r.choices(kinds, weights)[0]
        if k in PLAIN:
            tools = None
            if k != "add" and g.r.random() < 0.15:  # tools on offer that the question does not need
                tools = [TOOL_WEATHER] if g.r.random() < 0.5 else [TOOL_WEATHER, TOOL_ADD]
            msgs, analysis, final, _ = plain(g, k, tools)
            out.append(msgs + assistant(analysis, final))
        elif k == "multi_turn":
            msgs, _, final1, _ = plain(g, g.r.choice(PLAIN))
            user2, analysis2, final2, _ = getattr(g, g.r.choice(PLAIN))()
            out.append(msgs + [{"role": "assistant", "channel": "final", "content": final1},
                               {"role": "user", "content": user2}] + assistant(analysis2, final2))
        else:
            msgs, analysis, call, result, analysis2, final, _ = tool_episode(g, k.split("_")[0])
            turn1 = [{"role": "assistant", "channel": "analysis", "content": analysis}, {"role": "assistant", "tool_call": call}]
            if k.endswith("_call"):
                out.append(msgs + turn1)
            else:
                # A client may send the reasoning back with the call, or only the call (the OpenAI SDK's way).
                history = turn1 if g.r.random() < 0.5 else turn1[1:]
                out.append(msgs + history + [{"role": "tool", "name": call["name"], "content": result}]
                           + assistant(analysis2, final))
    return out


def heldout_items(g, per_family):
    items = []
    for fam in PLAIN:
        for _ in range(per_family):
            msgs, analysis, final, answer = plain(g, fam)
            items.append({"family": fam, "messages": msgs, "final": final, "answer": answer,
                          "references": [msgs + assistant(analysis, final)]})
    for kind in ["weather", "add"]:
        for _ in range(per_family):
            msgs, analysis, call, result, analysis2, final, answer = tool_episode(g, kind)
            after = msgs + [{"role": "assistant", "tool_call": call}, {"role": "tool", "name": call["name"], "content": result}]
            items.append({"family": "tool_" + kind, "messages": msgs, "tool_call": call, "tool_result": result,
                          "final": final, "answer": answer,
                          "references": [msgs + [{"role": "assistant", "channel": "analysis", "content": analysis},
                                                 {"role": "assistant", "tool_call": call}],
                                         after + assistant(analysis2, final)]})
    for _ in range(per_family):
        msgs, _, final1, _ = plain(g, g.r.choice(PLAIN))
        fam2 = g.r.choice(PLAIN)
        user2, analysis2, final2, answer2 = getattr(g, fam2)()
        msgs = msgs + [{"role": "assistant", "channel": "final", "content": final1}, {"role": "user", "content": user2}]
        items.append({"family": "multi_turn", "messages": msgs, "final": final2, "answer": answer2,
                      "references": [msgs + assistant(analysis2, final2)]})
    return items


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--train", type=int, default=40000)
    p.add_argument("--heldout", type=int, default=20, help="evaluation items per family")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    with open(f"{a.out}/train.jsonl", "w") as f:
        for m in train_examples(Gen(random.Random(a.seed), False), a.train):
            f.write(json.dumps({"messages": m}) + "\n")
    with open(f"{a.out}/heldout.jsonl", "w") as f:
        for it in heldout_items(Gen(random.Random(a.seed + 1000), True), a.heldout):
            f.write(json.dumps(it) + "\n")


if __name__ == "__main__":
    main()
