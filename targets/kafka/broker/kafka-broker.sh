#!/bin/sh
# kafka-broker CONFIG: Apache Kafka's broker as one KRaft node (broker and controller in
# one process, no ZooKeeper), in the foreground, from the jars `make build` put in ../lib.
# The log directory named in CONFIG is formatted first (kafka-storage format, with the
# cluster id in $KAFKA_CLUSTER_ID), then the broker replaces this shell (exec), so the
# harness's parent-death signal and session reach the JVM itself.
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
java=${JAVA:-java}
# A short-lived JVM: no JIT beyond C1, a small serial heap.
# shellcheck disable=SC2086
"$java" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx128m ${KAFKA_TOOL_OPTS:-} -cp "$here/lib/*" \
  kafka.tools.StorageTool format --ignore-formatted -t "${KAFKA_CLUSTER_ID:?}" -c "$config"
# shellcheck disable=SC2086
exec "$java" ${KAFKA_HEAP_OPTS:--Xmx1g -Xms1g} ${KAFKA_JVM_OPTS:-} -cp "$here/lib/*" kafka.Kafka "$config"
