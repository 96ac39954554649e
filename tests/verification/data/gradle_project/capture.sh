#!/bin/sh
# Re-make the Gradle captures in tests/reviews/data/test_output/ (see tests/reviews/data/README.md).
# Needs Debian's `gradle` (4.4.1) and `junit4`: apt-get install -y gradle junit4. Usage: sh capture.sh OUT
set -eu
out=$(realpath "$1")
here=$(dirname "$(realpath "$0")")
gradle_test() { gradle --offline --no-daemon --console=plain "$@" test 2>&1 || true; }
save_xml() {
  mkdir -p "$out/gradle_test-results/$1"
  cp build/test-results/test/TEST-demo.CalcTest.xml "$out/gradle_test-results/$1/"
}
fix_sub() { sed -i 's/sub(int a, int b) { return a + b; }/sub(int a, int b) { return a - b; }/' "$1"; }
fix_divides() { sed -i 's/1 \/ z/1 \/ (z + 1)/' "$1"; }

# One project: failing, fixed, then not compiling.
work=/tmp/cap/gradle_project
rm -rf "$work" && mkdir -p /tmp/cap && cp -r "$here" "$work" && rm -f "$work/capture.sh"
cd "$work"
gradle_test >"$out/gradle_fail.txt" && save_xml fail
fix_sub src/main/java/demo/Calc.java
fix_divides src/test/java/demo/CalcTest.java
gradle_test >"$out/gradle_pass.txt" && save_xml pass
echo 'class Broken {' >src/main/java/demo/Broken.java
gradle_test >"$out/gradle_compile_error.txt"

# Two subprojects, `a` as is and `b` with only `divides` fixed, run with --continue.
multi=/tmp/cap/gradle_multi
rm -rf "$multi" && mkdir -p "$multi" && cd "$multi"
for m in a b; do mkdir "$m" && cp -r "$here/src" "$here/build.gradle" "$m/"; done
fix_divides b/src/test/java/demo/CalcTest.java
printf "rootProject.name = 'multi'\ninclude 'a', 'b'\n" >settings.gradle
gradle_test --continue >"$out/gradle_multi_fail.txt"

# Only the temporary project paths are rewritten, as for the other captures.
sed -i 's#/tmp/cap/#/tmp/capture/#g' "$out"/gradle_*.txt
