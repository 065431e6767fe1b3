# Sourced by .ci/run: a one-host Slurm (munge, slurmctld, slurmd on this
# machine, its config in a temporary folder named by SLURM_CONF) and Open
# MPI, for tests/launchers.rs. `launchers_start` installs what is missing
# (root with apt) and starts the daemons; `launchers_stop` stops them and
# removes the folder, and stops munged when it started it. Without root or
# apt the tests fail under MEMPERF_TEST_STRICT (CI) and skip, saying so, elsewhere.

launchers_start() {
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "launchers: not root with apt: the Slurm and Open MPI tests cannot run" >&2
    return 0
  fi
  if ! command -v slurmctld >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge openmpi-bin >/dev/null) \
      || { echo "launchers: could not install slurm-wlm, munge, openmpi-bin; their tests cannot run" >&2; return 0; }
  fi
  LAUNCHERS_DIR=$(mktemp -d)
  local host cpus
  host=$(hostname -s)
  cpus=$(nproc)
  mkdir -p "$LAUNCHERS_DIR/spool/ctld" "$LAUNCHERS_DIR/spool/d" /run/munge /etc/munge
  [ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  chmod 400 /etc/munge/munge.key
  chown -R munge:munge /etc/munge /run/munge 2>/dev/null || true
  # munged is stopped at the end only when this script started it.
  if ! pgrep -x munged >/dev/null; then
    if munged --force 2>/dev/null || runuser -u munge -- munged --force; then
      LAUNCHERS_MUNGED=1
    else
      echo "launchers: munged did not start" >&2
    fi
  fi
  cat > "$LAUNCHERS_DIR/slurm.conf" <<CONF
ClusterName=memperf-ci
SlurmctldHost=$host
AuthType=auth/munge
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmctldPidFile=$LAUNCHERS_DIR/slurmctld.pid
SlurmdPidFile=$LAUNCHERS_DIR/slurmd.pid
SlurmdSpoolDir=$LAUNCHERS_DIR/spool/d
StateSaveLocation=$LAUNCHERS_DIR/spool/ctld
SlurmctldLogFile=$LAUNCHERS_DIR/slurmctld.log
SlurmdLogFile=$LAUNCHERS_DIR/slurmd.log
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF="$LAUNCHERS_DIR/slurm.conf"
  slurmctld -f "$SLURM_CONF" -i || echo "launchers: slurmctld did not start" >&2
  slurmd -f "$SLURM_CONF" || echo "launchers: slurmd did not start" >&2
  local i
  for i in $(seq 1 30); do
    sinfo -h -o %T 2>/dev/null | grep -qx idle && break
    sleep 1
  done
  if ! sinfo -h -o %T 2>/dev/null | grep -qx idle; then
    echo "launchers: the Slurm node did not come up; its tests cannot run (logs: $LAUNCHERS_DIR)" >&2
    sinfo >&2 || true
  fi
  # Open MPI refuses root unless told, and 2 ranks may exceed the slots.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
}

launchers_stop() {
  [ -n "${LAUNCHERS_DIR:-}" ] || return 0
  local pid
  for pid in "$LAUNCHERS_DIR/slurmd.pid" "$LAUNCHERS_DIR/slurmctld.pid"; do
    if [ -f "$pid" ]; then kill "$(cat "$pid")" 2>/dev/null || true; fi
  done
  if [ -n "${LAUNCHERS_MUNGED:-}" ]; then
    if [ -f /run/munge/munged.pid ]; then kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true; fi
    pkill -x munged 2>/dev/null || true
  fi
  # Daemons take a moment to go: up to 10 s before one is said to outlive.
  local i
  for i in $(seq 1 10); do
    sleep 1
    pgrep -f "$LAUNCHERS_DIR" >/dev/null || { [ -n "${LAUNCHERS_MUNGED:-}" ] && pgrep -x munged >/dev/null; } || break
  done
  # Every daemon started here is gone: say so if one is left.
  pgrep -f "$LAUNCHERS_DIR" >/dev/null && echo "launchers: a daemon outlived the tests: $(pgrep -af "$LAUNCHERS_DIR")" >&2
  [ -n "${LAUNCHERS_MUNGED:-}" ] && pgrep -x munged >/dev/null && echo "launchers: munged outlived the tests" >&2
  rm -rf "$LAUNCHERS_DIR"
  unset SLURM_CONF LAUNCHERS_DIR LAUNCHERS_MUNGED
  return 0
}
