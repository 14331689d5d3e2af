#!/usr/bin/env bash
# Makes Docker usable for the integration tests: installs docker.io, debootstrap and zstd
# from Debian when missing, starts dockerd in the background when it is not running, waits
# until the engine answers, then builds the targets' images (and etcd's from bookworm, for
# the service-versions test) or reloads them from the archive cache
# (~/.cache/harness/images, or $HARNESS_IMAGE_CACHE). Idempotent: a second
# run finds everything in place and returns in a few seconds.
#
# With CI=true it first removes containers and networks left by earlier (killed) runs.
# Env: PYTHON (default .venv/bin/python, else python3), DOCKERD_LOG (default
# /var/log/dockerd.log), HARNESS_SKIP_IMAGES=1 to stop after the engine is up.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "docker-setup: $*"; }

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v zstd >/dev/null 2>&1 || missing+=(zstd)
if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi

engine_up() { docker info >/dev/null 2>&1; }

if ! engine_up; then
    if pgrep -x dockerd >/dev/null 2>&1; then
        log "dockerd is running but not answering yet"
    else
        log "starting dockerd (log: ${DOCKERD_LOG:=/var/log/dockerd.log})"
        setsid nohup dockerd >>"$DOCKERD_LOG" 2>&1 </dev/null &
    fi
    for _ in $(seq 1 60); do
        engine_up && break
        sleep 1
    done
    if ! engine_up; then
        log "dockerd did not come up in 60 s; last lines of ${DOCKERD_LOG:-its log}:"
        tail -n 20 "${DOCKERD_LOG:-/var/log/dockerd.log}" 2>/dev/null || true
        exit 1
    fi
fi
log "engine up: $(docker version --format 'server {{.Server.Version}}, API {{.Server.APIVersion}}')"

PYTHON="${PYTHON:-}"
if [[ -z "$PYTHON" ]]; then
    if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
if [[ "${CI:-}" == true ]]; then
    # A killed earlier session may have left labelled nodes and networks: in CI nothing
    # else uses them. (Outside CI, `harness clusters down` is left to the user.)
    "$PYTHON" -m clusters.cleanup down
fi
if [[ "${HARNESS_SKIP_IMAGES:-0}" == 1 ]]; then
    exit 0
fi
start=$SECONDS
"$PYTHON" -m clusters.images build --all
# The one server of another Debian release CI runs (tests/integration/test_service_versions.py:
# etcd 3.4 from bookworm beside the default 3.5), so the test does not pay its build.
"$PYTHON" -m clusters.images build etcd@bookworm
log "images ready in $((SECONDS - start)) s"
