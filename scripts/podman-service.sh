#!/usr/bin/env bash
# Starts Podman's Docker-compatible API service for the local stack and the engine tests, with
# the settings that make Podman run on machines whose cgroups are in hybrid mode and that forbid
# raising RLIMIT_NOFILE / RLIMIT_NPROC (docs/runtimes.md, "Local container runtimes"). Idempotent: a socket that answers
# is left alone. Prints `DOCKER_HOST=…` and, when it started the service, `PODMAN_PID=…`
# (stop it with `kill <pid>`).
#
#   scripts/podman-service.sh [socket path]      default: /tmp/container-hosting-podman.sock
set -euo pipefail

socket="${1:-/tmp/container-hosting-podman.sock}"
state_dir="${PODMAN_STATE_DIR:-/tmp/container-hosting-podman}"
mkdir -p "$state_dir"
state_dir=$(cd "$state_dir" && pwd)

# These machines run cgroups in hybrid mode, which crun refuses, and forbid raising
# RLIMIT_NOFILE / RLIMIT_NPROC, which Podman does by default.
export CONTAINERS_CONF="$state_dir/containers.conf"
cat > "$CONTAINERS_CONF" <<'CONF'
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"
CONF

# The API's ping, through Node (curl is not on every machine): Podman's own client asks for the
# version, which a loaded Podman can take tens of seconds to give under its storage lock.
answers() {
  [ -S "$socket" ] && timeout 5 node -e 'require("node:http").get({ socketPath: process.argv[1], path: "/_ping" }, (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on("error", () => process.exit(1))' "$socket" >/dev/null 2>&1
}

if ! answers; then
  rm -f "$socket"
  # From the state directory: conmon writes an `oom` file into its working directory when the
  # kernel's OOM killer ends a container, which would otherwise land in the caller's checkout.
  (cd "$state_dir" && exec nohup podman system service --time=0 "unix://$socket" >"$state_dir/service.log" 2>&1 </dev/null) &
  echo "PODMAN_PID=$!"
  for _ in $(seq 1 100); do answers && break; sleep 0.1; done
  answers || { echo "Podman's API service did not answer on $socket; see $state_dir/service.log" >&2; exit 1; }
fi
echo "DOCKER_HOST=unix://$socket"
