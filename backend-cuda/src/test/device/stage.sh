#!/usr/bin/env bash
# Stages what the lent GPU machine needs to run the CUDA conformance kit without a JDK or Maven:
# a jlink'ed Java runtime and the test class path (jars), in DEST (default .cudakit) inside the checkout,
# which is added to .git/info/exclude so that it travels only when named in the device tool's `carry`.
#   backend-cuda/src/test/device/stage.sh [DEST]
# Then (device tool):  run(command="backend-cuda/src/test/device/run-kit.sh .cudakit", carry=[".cudakit"])
# and for whole-model figures: run(command="backend-cuda/src/test/device/run-bench.sh .cudakit", carry=[".cudakit"])
set -euo pipefail
root="$(git rev-parse --show-toplevel)"
cd "$root"
dest="${1:-.cudakit}"
exclude="$(git rev-parse --git-path info/exclude)"
mkdir -p "$(dirname "$exclude")"
case "$dest" in /*) ;; *) grep -qxF "/$dest/" "$exclude" 2>/dev/null || echo "/$dest/" >> "$exclude" ;; esac
JAVA_HOME="$("$root/scripts/find-jdk.sh")"; export JAVA_HOME; export PATH="$JAVA_HOME/bin:$PATH"

# Jars of kernels (with the PTX), engine-core (+ its test-jar: the kit) and backend-cuda; test classes compiled.
mvn -B -q -Dstyle.color=never -pl kernels,engine-core,backend-cuda -am package -DskipTests \
    dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/test-classpath.txt
rm -rf "$dest"; mkdir -p "$dest/lib"
IFS=: read -r -a entries < backend-cuda/target/test-classpath.txt || true   # no newline at the end
for e in "${entries[@]}" backend-cuda/target/backend-cuda-*.jar; do
  case "$e" in *-sources.jar|*-javadoc.jar) continue ;; esac
  if [ -d "$e" ]; then echo "stage.sh: unexpected folder on the class path: $e" >&2; exit 1; fi
  cp "$e" "$dest/lib/"
done
jar cf "$dest/lib/backend-cuda-tests.jar" -C backend-cuda/target/test-classes .

# The goss-gpu command (all backends in one jar) for run-bench.sh: `make-test-model` and `bench` there.
mvn -B -q -Dstyle.color=never -pl cli -am package -DskipTests
cp cli/target/goss-gpu.jar "$dest/"

# A runtime with the modules the kit needs (measured: the whole ReferenceConformanceTest runs on it;
# jdeps would add java.desktop/java.sql for Jackson's optional paths, 15 MB more), packed as a .tgz
# because the working tree plus carried paths may not exceed 64 MiB.
jlink --add-modules java.base,java.logging,java.management,java.xml,jdk.unsupported,jdk.incubator.vector \
      --strip-debug --no-header-files --no-man-pages --compress=zip-9 --output "$dest/rt"
tar czf "$dest/rt.tgz" -C "$dest" rt
rm -rf "$dest/rt"
du -sh "$dest" "$dest/rt.tgz" "$dest/lib"
echo "staged in $dest; on the device: backend-cuda/src/test/device/run-kit.sh $dest"
