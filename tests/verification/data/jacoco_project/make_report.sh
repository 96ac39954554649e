#!/bin/sh
# Rebuild jacoco.xml from this project: Debian libjacoco-java 0.8.6 + JDK 17 (class files for Java 11).
# Usage: sh make_report.sh OUTDIR   (writes OUTDIR/jacoco.exec and OUTDIR/jacoco.xml)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$1
J=/usr/share/java
CP=$J/org.jacoco.core-0.8.6.jar:$J/org.jacoco.report-0.8.6.jar:$J/asm-9.4.jar:$J/asm-commons-9.4.jar:$J/asm-tree-9.4.jar
mkdir -p "$out"
cd "$out"
unzip -o -q $J/org.jacoco.agent-0.8.6.jar jacocoagent.jar
javac --release 11 -d classes "$here"/src/demo/*.java
javac --release 11 -cp classes -d testclasses "$here"/test/demo/RunTests.java
java -javaagent:jacocoagent.jar=destfile=jacoco.exec -cp classes:testclasses demo.RunTests
javac -cp "$CP" -d toolclasses "$here"/tool/ReportXml.java
java -cp "$CP:toolclasses" ReportXml jacoco.exec classes "$here"/src jacoco.xml
