#!/usr/bin/env bash
# A local streaming replica of a running PostgreSQL cluster, for benchmarks of GATELOG_DATABASE_READ_URL
# (docs/scaling.md "Read replicas"). Debian's PostgreSQL tools (pg_createcluster, pg_ctlcluster); run as
# root or postgres.
#
#   scripts/pg-replica.sh up      # a hot standby of 127.0.0.1:$PRIMARY_PORT on $REPLICA_PORT, replaying
#   scripts/pg-replica.sh status  # both sides' view of the replication, and the replay lag
#   scripts/pg-replica.sh down    # the standby stopped and removed, the primary's pg_hba.conf as before
#
# Settings (environment): PRIMARY_PORT (5432), REPLICA_PORT (5433), PG_VERSION (15), CLUSTER (the standby's
# cluster name, gatelog_replica), MAX_RATE (pg_basebackup --max-rate, e.g. 50M, to spare a benchmark
# running on the primary meanwhile; default: no limit). The base backup copies the whole primary cluster,
# every database in it: its size in disk space, and its time.
#
# `up` lets replication connections from 127.0.0.1 in without a password: a line marked below, put first
# in the primary's pg_hba.conf (first match wins), then a reload; `down` takes that line out again.
set -euo pipefail

PRIMARY_PORT=${PRIMARY_PORT:-5432}
REPLICA_PORT=${REPLICA_PORT:-5433}
PG_VERSION=${PG_VERSION:-15}
CLUSTER=${CLUSTER:-gatelog_replica}
MAX_RATE=${MAX_RATE:-}
MARK='# added by gatelog scripts/pg-replica.sh'

# Commands that read or write the clusters' files run as postgres.
as_postgres() {
  if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi
}
primary_sql() { as_postgres psql -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -wXAtqc "$1"; }
replica_sql() { as_postgres psql -h 127.0.0.1 -p "$REPLICA_PORT" -U postgres -wXAtqc "$1"; }
cluster_exists() { pg_lsclusters -h | awk -v v="$PG_VERSION" -v c="$CLUSTER" '$1 == v && $2 == c { found = 1 } END { exit !found }'; }

allow_replication() {
  local hba
  hba=$(primary_sql 'show hba_file')
  if ! grep -qF "$MARK" "$hba"; then
    sed -i "1i host replication all 127.0.0.1/32 trust $MARK" "$hba"
    primary_sql 'select pg_reload_conf()' >/dev/null
  fi
}

disallow_replication() {
  local hba
  hba=$(primary_sql 'show hba_file' 2>/dev/null) || return 0
  if grep -qF "$MARK" "$hba"; then
    sed -i "\\|$MARK|d" "$hba"
    primary_sql 'select pg_reload_conf()' >/dev/null
  fi
}

up() {
  if cluster_exists; then
    echo "cluster $PG_VERSION/$CLUSTER exists already: scripts/pg-replica.sh down first" >&2
    exit 1
  fi
  primary_sql 'select 1' >/dev/null
  allow_replication
  # A cluster of Debian's (its configuration in /etc/postgresql, its port, its service), whose data
  # directory is then replaced by the primary's base backup: standby.signal and primary_conninfo (-R).
  pg_createcluster "$PG_VERSION" "$CLUSTER" --port "$REPLICA_PORT" >/dev/null
  # The standby lets in whom the primary lets in (its readers are the primary's users).
  grep -vF "$MARK" "$(primary_sql 'show hba_file')" >"/etc/postgresql/$PG_VERSION/$CLUSTER/pg_hba.conf"
  local data
  data=$(pg_lsclusters -h | awk -v v="$PG_VERSION" -v c="$CLUSTER" '$1 == v && $2 == c { print $6 }')
  rm -rf "${data:?}"/*
  local rate=()
  [ -n "$MAX_RATE" ] && rate=(--max-rate "$MAX_RATE")
  echo "base backup of 127.0.0.1:$PRIMARY_PORT ($(primary_sql "select pg_size_pretty(sum(pg_database_size(datname))) from pg_database")) into $data"
  as_postgres pg_basebackup -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -D "$data" -R -X stream -c fast "${rate[@]}"
  pg_ctlcluster "$PG_VERSION" "$CLUSTER" start
  for _ in $(seq 1 60); do
    [ "$(replica_sql 'select pg_is_in_recovery()' 2>/dev/null)" = t ] && break
    sleep 1
  done
  [ "$(replica_sql 'select pg_is_in_recovery()')" = t ] || { echo 'the standby did not start' >&2; exit 1; }
  echo "standby of 127.0.0.1:$PRIMARY_PORT replaying on 127.0.0.1:$REPLICA_PORT:" \
    "GATELOG_DATABASE_READ_URL=postgres://postgres@127.0.0.1:$REPLICA_PORT/DATABASE"
}

status() {
  primary_sql "select application_name, state, coalesce(replay_lag::text, '0') as replay_lag
    from pg_stat_replication" | sed 's/^/primary sees: /'
  if cluster_exists; then
    replica_sql "select 'in recovery: ' || pg_is_in_recovery() || ', last replayed: ' ||
      coalesce(pg_last_xact_replay_timestamp()::text, 'nothing yet')" | sed 's/^/standby: /'
  else
    echo "standby: no cluster $PG_VERSION/$CLUSTER"
  fi
}

down() {
  if cluster_exists; then pg_dropcluster "$PG_VERSION" "$CLUSTER" --stop; fi
  disallow_replication
  echo "standby $PG_VERSION/$CLUSTER removed"
}

case "${1:-}" in
  up) up ;;
  status) status ;;
  down) down ;;
  *)
    echo 'usage: scripts/pg-replica.sh up|status|down' >&2
    exit 2
    ;;
esac
