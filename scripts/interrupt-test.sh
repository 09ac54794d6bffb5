#!/usr/bin/env bash
# Ctrl-C and Ctrl-D in an interactive chat, typed into a real terminal (tmux), with the launcher's relaunch
# (which preloads the JDK's signal-chaining libjsig.so) and without it (libjsig preloaded by hand):
#   1. Ctrl-C at the idle prompt after a reply quits with 130;
#   2. Ctrl-C during a reply stops it, the chat goes on, and Ctrl-D then quits with 0 on a line of its own.
# Needs tmux and a built cli/target/goss-gpu.jar.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
java="$("$root/scripts/find-jdk.sh")/bin/java"
jar="$root/cli/target/goss-gpu.jar"
work="$(mktemp -d)"
session="goss-interrupt-$$"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$work"' EXIT

"$java" -jar "$jar" make-test-model --format original --preset demo --layers 2 --seed 5 --out "$work/model" >/dev/null 2>&1

screen() { tmux capture-pane -p -t "$session"; }
wait_for() { # regex, seconds
  local i
  for ((i = 0; i < $2 * 5; i++)); do screen | grep -Eq -- "$1" && return 0; sleep 0.2; done
  echo "interrupt test ($case): timed out waiting for /$1/; the terminal shows:" >&2; screen >&2; return 1
}
wait_count() { # fixed text, count, seconds
  local i
  for ((i = 0; i < $3 * 5; i++)); do [ "$(screen | grep -Fc -- "$1")" -ge "$2" ] && return 0; sleep 0.2; done
  echo "interrupt test ($case): timed out waiting for $2 lines with '$1'; the terminal shows:" >&2; screen >&2; return 1
}
start() { # command line
  tmux kill-session -t "$session" 2>/dev/null || true
  tmux new-session -d -s "$session" -x 220 -y 50 "bash --norc --noprofile"
  tmux send-keys -t "$session" "$1; echo EXIT=\$?" Enter
  wait_for "Ctrl-D quits" 120
}
# The engine's own error lines, a Java stack trace or a JVM crash log; anchored, because the random-weight
# model's text can hold words like "Exceptions".
check_clean() {
  if screen | grep -Eq '^goss-gpu: internal error|^Exception in thread|^[[:space:]]+at [[:alnum:]_.$/]+\(|hs_err_pid'; then echo "interrupt test ($case): an error was printed:" >&2; screen >&2; return 1; fi
}

jsig="$(dirname "$java")/../lib/libjsig.so"
runs=("$java -jar $jar --model $work/model --backend cpu"
      "GOSS_NO_RELAUNCH=1 LD_PRELOAD=$jsig $java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -jar $jar --model $work/model --backend cpu")
names=("relaunched" "no relaunch, libjsig preloaded")
for i in 0 1; do
  case="${names[$i]}: Ctrl-C at the idle prompt"
  start "${runs[$i]} -n 4 -v"
  tmux send-keys -t "$session" "hello" Enter
  wait_for "stopped: " 120
  sleep 0.5
  tmux send-keys -t "$session" C-c
  wait_for "^EXIT=130$" 30
  check_clean

  case="${names[$i]}: Ctrl-C during a reply, then Ctrl-D"
  start "${runs[$i]} -n 3000 --seed 1 -v" # seeded: a random reply can end (<|return|>) before the Ctrl-C
  tmux send-keys -t "$session" "tell me a long story" Enter
  sleep 3
  tmux send-keys -t "$session" C-c
  wait_count "stopped: cancelled" 1 90
  tmux send-keys -t "$session" "and another" Enter
  # Soon: the second reply's length depends on where the first was cut (the seed's draws go on from there), and
  # on a fast machine it ended (<|return|>, 323 tokens at 342 tok/s) before a Ctrl-C sent after 2 s (2026-11-28).
  sleep 0.5
  tmux send-keys -t "$session" C-c
  wait_count "stopped: cancelled" 2 90
  tmux send-keys -t "$session" C-d
  wait_for "^EXIT=0$" 30
  check_clean
done
echo "interrupt test: Ctrl-C at the prompt quits with 130, Ctrl-C in a reply stops it, Ctrl-D quits with 0 (with and without relaunch): passed"
