#!/usr/bin/env bash
# The library as a user's project gets it, checked end to end (CI runs this after ./gossw test):
#   1. engine-core, the opencl backend and the LangChain4j / Spring AI modules with the starter (with their kernels
#      artifacts, the parent pom and the BOM) are built with -Drelease and installed into a PRIVATE local repository,
#      target/ci-m2
#      (never ~/.m2: scripts/private-m2-settings.xml reads third-party artifacts from ~/.m2 as a read-only remote),
#      signed with a throwaway gpg key; nothing else of the reactor (cli, server, test harness) is built;
#   2. each installed artifact has what Maven Central asks for: a sources jar, a javadoc jar, a .asc signature
#      of every file, poms naming a licence, the SCM and the developers, and the module name engine-core's
#      module-info knows each jar by;
#   3. the projects under examples/ (each a Maven project outside the reactor that imports goss-gpu-bom) are
#      compiled against that repository: examples/api runs on a small random-weight model with --backend opencl
#      (PoCL in CI), through exec:exec with the flags the README lists; examples/langchain4j and examples/spring-ai
#      run their tests on the demo model (a chat, a streamed chat, a @Tool call through the framework), and their
#      main class is the one docs/langchain4j.md and docs/spring-ai.md show;
#   4. README.md's pom fragment and Java example, copied into a new project as they are, compile against that
#      repository (scripts/readme-snippets.sh).
# Reuses the reactor's build output (compiled classes, kernels) when ./gossw test or build ran before.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
JAVA_HOME="$(scripts/find-jdk.sh)"; export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"
repo="$root/target/ci-m2"
work="$root/target/examples-test"
export GNUPGHOME="$work/gnupg"
rm -rf "$work" "$repo/io/gossgpu"
mkdir -p "$work" && mkdir -m 700 "$GNUPGHOME"
trap 'gpgconf --kill gpg-agent 2>/dev/null || true' EXIT   # the agent gpg started for this GNUPGHOME only
mvn_() { mvn -B -q -Dstyle.color=never -s "$root/scripts/private-m2-settings.xml" -Dmaven.repo.local="$repo" "$@"; }
fail() { echo "examples test: $*" >&2; exit 1; }

command -v gpg >/dev/null || fail "gpg is needed to check the signed release layout (apt-get install gnupg)"
gpg --batch --quiet --passphrase '' --quick-gen-key 'goss-gpu CI throwaway <ci@example.invalid>' ed25519 sign 1d 2>/dev/null

# After ./gossw test or build, the kernels modules' native outputs (libgoss_cpu.so, PTX) are in
# backend-*/kernels/target/classes: reuse them instead of building them again (backend-cpu/kernels/build.sh always
# recompiles, and that makes the modules that depend on it recompile).
reuse=()
[ -d backend-cpu/kernels/target/classes/io/gossgpu/kernels ] && reuse=(-Dexec.skip -Dgoss.cuda.skipKernels)
modules=engine-core,backend-cpu,gpu-device,testkit,backend-opencl,goss-gpu-langchain4j,goss-gpu-spring-ai,goss-gpu-spring-boot-starter
echo "examples test: installing the bom, kernels-cpu, kernels-opencl and $modules into $repo (-Drelease${reuse:+, reusing the kernels built before})"
mvn_ -Drelease -DskipTests "${reuse[@]}" -pl bom,engine-core,backend-cpu,backend-opencl,langchain4j,spring-ai,spring-boot-starter -am install

v=0.1.0-SNAPSHOT
for a in kernels-cpu kernels-opencl ${modules//,/ }; do
  d="$repo/io/gossgpu/$a/$v"
  for f in "$a-$v.jar" "$a-$v-sources.jar" "$a-$v-javadoc.jar" "$a-$v.pom"; do
    [ -s "$d/$f" ] || fail "$a: $f was not installed"
    gpg --batch --quiet --verify "$d/$f.asc" "$d/$f" 2>/dev/null || fail "$a: $f.asc is missing or does not verify"
  done
  grep -q '<artifactId>goss-gpu-parent</artifactId>' "$d/$a-$v.pom" || fail "$a: its pom does not inherit goss-gpu-parent's metadata"
done
for p in goss-gpu-parent goss-gpu-bom; do
  pom="$repo/io/gossgpu/$p/$v/$p-$v.pom"
  gpg --batch --quiet --verify "$pom.asc" "$pom" 2>/dev/null || fail "$p: $p-$v.pom.asc is missing or does not verify"
  for tag in '<licenses>' '<scm>' '<developers>' '<url>' '<description>'; do
    grep -q "$tag" "$pom" || fail "$p: its pom lacks $tag (Maven Central requires it)"
  done
done
# Each jar's module name: engine-core and the backend have module-info; the framework modules, which engine-core's
# module-info names in its qualified exports, carry an Automatic-Module-Name (issue 41), not one derived from the file.
while read -r a name; do
  jar --describe-module --file "$repo/io/gossgpu/$a/$v/$a-$v.jar" > "$work/module" 2>&1 && grep -q "^$name@" "$work/module" \
    || fail "$a: its module is not $name: $(tr '\n' ' ' < "$work/module")"
done <<'NAMES'
engine-core io.gossgpu.core
backend-opencl io.gossgpu.opencl
goss-gpu-langchain4j io.gossgpu.langchain4j
goss-gpu-spring-ai io.gossgpu.springai
goss-gpu-spring-boot-starter io.gossgpu.springai.autoconfigure
NAMES
has() { jar tf "$1" > "$work/listing" && grep -qx "$2" "$work/listing"; }  # (no pipe: grep -q would cut jar off)
has "$repo/io/gossgpu/engine-core/$v/engine-core-$v-javadoc.jar" io.gossgpu.core/io/gossgpu/api/Engine.html \
  || fail "engine-core's javadoc jar has no page for io.gossgpu.api.Engine"
has "$repo/io/gossgpu/engine-core/$v/engine-core-$v-sources.jar" io/gossgpu/api/Engine.java \
  || fail "engine-core's sources jar lacks io/gossgpu/api/Engine.java"

[ -f cli/target/goss-gpu.jar ] || ./gossw build
java -jar cli/target/goss-gpu.jar make-test-model --format original --preset demo --layers 2 --seed 5 --out "$work/model" >/dev/null 2>&1

echo "examples test: release layout checked (${SECONDS}s); building and running examples/api against $repo"
out="$(mvn_ -f examples/api/pom.xml compile exec:exec -Dmodel="$work/model" -Dbackend=opencl -Dquestion=Hello 2>&1)" \
  || { echo "$out" >&2; fail "the examples/api project failed"; }
echo "$out" | sed 's/^/  | /'
echo "$out" | grep -q '^backend: opencl (' || fail "the example did not run on the opencl backend"
echo "$out" | grep -Eq '^tokens: [1-9][0-9]*, ' || fail "the example generated no tokens"
! echo "$out" | grep -q 'goss-gpu: warning: start java with' || fail "the example's JVM lacks flags the README lists"

# The framework examples: their tests run the example's own classes on the demo model (greedy, so every answer is
# known) and fail unless the @Tool method ran with the city asked about and the answer reports what it returned.
# One Maven run builds both (examples/pom.xml lists them), side by side (-T 2): most of their time is Maven, javac and
# JVM start-up, not generation.
t0=$SECONDS
rm -rf examples/{langchain4j,spring-ai}/target/surefire-reports
out="$(mvn_ -T 2 -f examples/pom.xml -pl langchain4j,spring-ai test 2>&1)" || { echo "$out" >&2; fail "the examples/langchain4j or examples/spring-ai tests failed"; }
for ex in langchain4j spring-ai; do
  tests="$(cat examples/$ex/target/surefire-reports/*.txt | grep -o 'Tests run: [0-9]*' | awk '{n += $3} END {print n + 0}')"
  [ "$tests" -ge 3 ] || fail "examples/$ex ran $tests tests, expected its 3 (chat, streamed chat, tool call)"
done
echo "examples test: examples/langchain4j and examples/spring-ai: their tests passed on the demo model ($((SECONDS - t0)) s)"
scripts/docs-examples.sh
scripts/readme-snippets.sh "$repo" "$work/readme"
echo "examples test: passed in ${SECONDS}s (release layout signed and complete; examples/api run on opencl, examples/langchain4j and examples/spring-ai tested on the demo model)"
