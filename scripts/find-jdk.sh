#!/usr/bin/env bash
# Prints the home of a JDK >= 22 (the oldest Java goss-gpu runs on), or explains what to install.
# Looks at GOSS_JAVA_HOME, JAVA_HOME, `java` on PATH, /usr/lib/jvm/*, /opt/*, ~/.sdkman, and macOS java_home.
MIN=22

jdk_feature() { # prints the feature version of the JDK at $1, or nothing
  local rel="$1/release"
  [ -x "$1/bin/javac" ] || return 0
  if [ -f "$rel" ]; then
    sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$rel"
  else
    "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/.*java.specification.version = \([0-9]*\).*/\1/p'
  fi
}

candidates=()
[ -n "${GOSS_JAVA_HOME:-}" ] && candidates+=("$GOSS_JAVA_HOME")
[ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
if command -v java >/dev/null 2>&1; then
  j=$(readlink -f "$(command -v java)"); candidates+=("$(dirname "$(dirname "$j")")")
fi
if [ -x /usr/libexec/java_home ]; then
  mac=$(/usr/libexec/java_home -v "$MIN+" 2>/dev/null) && candidates+=("$mac")
fi
for d in /usr/lib/jvm/* /opt/*jdk* /opt/java/* "$HOME"/.sdkman/candidates/java/* "$HOME"/.jdks/* /Library/Java/JavaVirtualMachines/*/Contents/Home; do
  [ -d "$d" ] && candidates+=("$d")
done

best=""; bestv=0
for c in "${candidates[@]}"; do
  v=$(jdk_feature "$c")
  if [ -n "$v" ] && [ "$v" -ge "$MIN" ] && [ "$v" -gt "$bestv" ]; then best="$c"; bestv="$v"; fi
done
if [ -z "$best" ]; then
  echo "goss-gpu needs a JDK $MIN or newer, and none was found (looked at GOSS_JAVA_HOME, JAVA_HOME, PATH, /usr/lib/jvm, /opt, ~/.sdkman, macOS java_home)." >&2
  echo "Install one (for example Temurin 25: apt-get install temurin-25-jdk, or brew install --cask temurin) or set JAVA_HOME to it." >&2
  exit 1
fi
echo "$best"
