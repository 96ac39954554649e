#!/bin/sh
# Re-make the Gradle captures in tests/reviews/data/test_output/ (see tests/reviews/data/README.md).
# Needs Debian's `gradle` (4.4.1) and `junit4`: apt-get install -y gradle junit4. Usage: sh capture.sh OUT
set -eu
out=$(realpath "$1")
here=$(dirname "$(realpath "$0")")
work=/tmp/cap/gradle_project
rm -rf "$work" && mkdir -p /tmp/cap && cp -r "$here" "$work" && rm -f "$work/capture.sh"
cd "$work"
run() { gradle --offline --no-daemon --console=plain test >"$out/$1" 2>&1 || true; }
save_xml() {
  mkdir -p "$out/gradle_test-results/$1"
  cp build/test-results/test/TEST-demo.CalcTest.xml "$out/gradle_test-results/$1/"
}
run gradle_fail.txt && save_xml fail
sed -i 's/sub(int a, int b) { return a + b; }/sub(int a, int b) { return a - b; }/' \
  src/main/java/demo/Calc.java
sed -i 's/1 \/ z/1 \/ (z + 1)/' src/test/java/demo/CalcTest.java
run gradle_pass.txt && save_xml pass
echo 'class Broken {' >src/main/java/demo/Broken.java
run gradle_compile_error.txt
# Only the temporary project path is rewritten, as for the other captures.
sed -i 's#/tmp/cap/#/tmp/capture/#g' "$out"/gradle_*.txt
