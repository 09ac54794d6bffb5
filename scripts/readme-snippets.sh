#!/usr/bin/env bash
# README.md's "Using it from Java" snippets compile as copied into a new project (issue 41): the first ```xml block
# after "### Depending on it" becomes the body of a pom (only groupId/artifactId/version added around it), and the
# ```java block under "## Using it from Java" the body of a main method (only imports and a class added around it).
# The project is compiled against REPO, a local repository where goss-gpu is installed (examples-test.sh makes one).
#   usage: scripts/readme-snippets.sh REPO WORKDIR
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repo="$1" work="$2"
fail() { echo "readme snippets: $*" >&2; exit 1; }
# block FILE HEADING LANG: the first ```LANG block after the line HEADING
block() { awk -v h="$2" -v l="$3" '$0 == h {s = 1} s == 1 && $0 == "```" l {s = 2; next} s == 2 && $0 == "```" {exit} s == 2 {print}' "$1"; }
xml="$(block "$root/README.md" '### Depending on it' xml)"
java="$(block "$root/README.md" '## Using it from Java' java)"
[ -n "$xml" ] || fail "no \`\`\`xml block under '### Depending on it' in README.md"
[ -n "$java" ] || fail "no \`\`\`java block under '## Using it from Java' in README.md"
rm -rf "$work" && mkdir -p "$work/src/main/java/readme"
{ echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
  echo '<groupId>com.example</groupId><artifactId>readme-snippets</artifactId><version>1.0</version>'
  echo "$xml"
  echo '</project>'; } > "$work/pom.xml"
{ echo 'package readme;'
  echo 'import io.gossgpu.api.*;'
  echo 'import java.nio.file.Path;'
  echo 'public class Snippet { public static void main(String[] args) {'
  echo "$java"
  echo '} }'; } > "$work/src/main/java/readme/Snippet.java"
out="$(mvn -B -q -Dstyle.color=never -s "$root/scripts/private-m2-settings.xml" -Dmaven.repo.local="$repo" \
  -Dproject.build.sourceEncoding=UTF-8 -f "$work/pom.xml" compile 2>&1)" || { echo "$out" >&2; fail "README.md's pom fragment and Java example do not compile as written ($work)"; }
echo "readme snippets: README.md's pom fragment and Java example compile as written"
