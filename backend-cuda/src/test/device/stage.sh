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

# Jars of kernels-cuda (with the PTX), kernels-opencl, engine-core, backend-cuda and backend-opencl (its kit runs on
# the NVIDIA driver's OpenCL), with their test class paths: testkit (the conformance kit, also inside goss-gpu.jar
# through tools) and gpu-device's test-jar (the split suites), which -am builds as the modules' test dependencies;
# test classes compiled.
mvn -B -q -Dstyle.color=never -pl backend-cuda/kernels,backend-opencl/kernels,engine-core,backend-cuda,backend-opencl -am package -DskipTests \
    dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/test-classpath.txt
rm -rf "$dest"; mkdir -p "$dest/lib"
for m in backend-cuda backend-opencl; do
  IFS=: read -r -a entries < "$m/target/test-classpath.txt" || true   # no newline at the end
  for e in "${entries[@]}" "$m"/target/"$m"-*.jar; do
    case "$e" in *-sources.jar|*-javadoc.jar) continue ;; esac
    if [ -d "$e" ]; then echo "stage.sh: unexpected folder on the class path: $e" >&2; exit 1; fi
    cp "$e" "$dest/lib/"
  done
  jar cf "$dest/lib/$m-tests.jar" -C "$m/target/test-classes" .
done

# The goss-gpu command (all backends in one jar) for run-bench.sh: `make-test-model` and `bench` there.
mvn -B -q -Dstyle.color=never -pl cli -am package -DskipTests
cp cli/target/goss-gpu.jar "$dest/"
# The kit's class path is lib/* then goss-gpu.jar (run-kit.sh), so lib keeps only the jars goss-gpu.jar lacks
# (JUnit, the test classes): the carried tree must stay under 64 MiB.
unzip -Z1 "$dest/goss-gpu.jar" > "$dest/fat.lst"
for j in "$dest"/lib/*.jar; do
  c=$(unzip -Z1 "$j" | grep -E '\.(class|ptx)$' | grep -v module-info | head -1 || true) # head closes the pipe early
  if [ -z "$c" ] || grep -qxF "$c" "$dest/fat.lst"; then rm "$j"; fi
done
rm "$dest/fat.lst"

# The OpenCL ICD loader (ocl-icd), for run-session.sh on an image without one; best effort (needs apt).
mkdir -p "$dest/ocl"
if (cd "$dest/ocl" && apt-get download -q ocl-icd-libopencl1 >/dev/null 2>&1); then
  dpkg -x "$dest"/ocl/*.deb "$dest/ocl/x" && cp "$dest"/ocl/x/usr/lib/*/libOpenCL.so.1.0.0 "$dest/ocl/libOpenCL.so.1"
  rm -rf "$dest"/ocl/*.deb "$dest/ocl/x"
else
  echo "stage.sh: could not download ocl-icd-libopencl1; run-session.sh will rely on the device's own OpenCL loader" >&2
fi

# A runtime with the modules the kit needs (measured: the whole ReferenceConformanceTest runs on it;
# jdeps would add java.desktop/java.sql for Jackson's optional paths, 15 MB more), packed with xz because the
# working tree plus carried paths may not exceed 64 MiB. Modules left uncompressed and libjvm without its debug
# symbols: xz then packs it into ~15 MB (the zip-compressed image with symbols was 28 MB as a .tgz, 2026-11-28).
jlink --add-modules java.base,java.logging,java.management,java.xml,jdk.unsupported,jdk.incubator.vector \
      --strip-debug --no-header-files --no-man-pages --compress=zip-0 \
      --strip-native-debug-symbols=exclude-debuginfo-files --output "$dest/rt"
XZ_OPT='-9e -T2' tar cJf "$dest/rt.tar.xz" -C "$dest" rt
rm -rf "$dest/rt"
du -sh "$dest" "$dest/rt.tar.xz" "$dest/lib"
echo "staged in $dest; on the device: backend-cuda/src/test/device/run-kit.sh $dest"

# The "before" side of run-ab.sh / run-gguf-bench.sh: BEFORE_JAR=path/to/previous/goss-gpu.jar keeps all of that
# build's own classes and PTX (io/gossgpu/**, ~4.4 MB) as DEST/before.jar, put ahead of goss-gpu.jar on the class
# path there: a whole previous build on the same third-party jars (the CUDA classes alone could miss a changed
# device layer).
if [ -n "${BEFORE_JAR:-}" ]; then
  tmp="$(mktemp -d)"
  unzip -q "$BEFORE_JAR" 'io/gossgpu/*' -d "$tmp"
  jar cf "$dest/before.jar" -C "$tmp" .
  rm -rf "$tmp"
  du -sh "$dest/before.jar"
fi
