# Sourced by the run-*.sh scripts of this folder on the lent GPU machine (no JDK there).
#   goss_runtime DIR        unpacks DIR/rt.tar.xz (stage.sh's jlink'ed runtime) to /tmp/goss-rt once, and sets the
#                           array `java` to start it with the options the staged jars need
#   goss_20b_model DIR N    sets `model` to a generated gpt-oss-20b-shaped checkpoint (original layout, BF16
#                           dense, random weights) of N layers under /tmp, written once with DIR/goss-gpu.jar
goss_runtime() {
  local rt=/tmp/goss-rt
  [ -x "$rt/rt/bin/java" ] || { mkdir -p "$rt" && tar xJf "$1/rt.tar.xz" -C "$rt"; } || return 3
  java=("$rt/rt/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx16g)
  export GOSS_NO_RELAUNCH=1
}

goss_20b_model() {
  model=/tmp/goss-20b-L$2
  [ -f "$model/config.json" ] || "${java[@]}" -jar "$1/goss-gpu.jar" make-test-model --format original \
      --preset gpt_oss_20b --layers "$2" --out "$model" 2>&1 | tail -1
}
