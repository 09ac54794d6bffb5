#!/usr/bin/env bash
# The framework pages show the example projects' code as it is: the first ```java block of docs/langchain4j.md and
# of docs/spring-ai.md is, byte for byte, the main class of examples/langchain4j and examples/spring-ai (which
# scripts/examples-test.sh builds and tests), and the page's ```properties block, when it has one, the project's
# application.properties.
#   usage: scripts/docs-examples.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fail() { echo "docs examples: $*" >&2; exit 1; }
# block FILE LANG: the first ```LANG block of FILE
block() { awk -v l="$2" 's == 0 && $0 == "```" l {s = 1; next} s == 1 && $0 == "```" {exit} s == 1 {print}' "$1"; }
same() { # PAGE LANG SOURCE
  [ -f "$root/$3" ] || fail "$3 does not exist"
  diff -u <(block "$root/$1" "$2") "$root/$3" >&2 || fail "$1's \`\`\`$2 block is not $3 (above: what differs); copy the file into the page"
}
same docs/langchain4j.md java examples/langchain4j/src/main/java/example/langchain4j/WeatherAssistant.java
same docs/spring-ai.md java examples/spring-ai/src/main/java/example/springai/WeatherApp.java
same docs/spring-ai.md properties examples/spring-ai/src/main/resources/application.properties
echo "docs examples: docs/langchain4j.md and docs/spring-ai.md show the example projects' code as it is"
