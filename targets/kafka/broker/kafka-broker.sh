#!/bin/sh
# kafka-broker CONFIG: Apache Kafka's broker as one KRaft node (broker and controller in
# one process, no ZooKeeper), in the foreground, from the jars `make build` put in ../lib.
# KRaft needs a formatted log directory: `make build` formatted one once (../formatted,
# kafka-storage format), and each broker starts on a copy of it in the log directory CONFIG
# names, which saves a JVM start per broker. The broker then replaces this shell (exec),
# so the harness's parent-death signal and session reach the JVM itself.
#   KAFKA_HEAP_OPTS  the broker's heap (msgbench/catalogue.py sets it)
#   KAFKA_JVM_OPTS   further JVM options
#   JAVA             the java to run (default: java on PATH)
#   kafka-broker --version  prints the version of the jars
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --version ]; then
  for jar in "$here"/lib/kafka-server-[0-9]*.jar; do
    jar=${jar##*/kafka-server-}; echo "kafka ${jar%.jar}"
  done
  exit 0
fi
config=${1:?usage: kafka-broker CONFIG | --version}
logdir=$(sed -n 's/^log\.dirs=//p' "$config")
if [ ! -f "$here/formatted/meta.properties" ] || [ -z "$logdir" ]; then
  echo "kafka-broker: needs $here/formatted (make build) and log.dirs in $config" >&2
  exit 2
fi
mkdir -p "$logdir"
cp -R "$here/formatted/." "$logdir/"
# shellcheck disable=SC2086
exec "${JAVA:-java}" ${KAFKA_HEAP_OPTS:--Xmx1g -Xms1g} ${KAFKA_JVM_OPTS:-} -cp "$here/lib/*" kafka.Kafka "$config"
