#!/usr/bin/env bash
# Create (or reuse) the local virtual environment and install Solace with every
# dependency, models included. Idempotent: a second run only checks what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${SOLACE_VENV:-.venv}"
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
pip() { "$VENV/bin/python" -m pip "$@"; }

# The web console's tests drive Debian's Chromium through Playwright (pip's playwright,
# never its browser download): install the package when absent, as root, without
# questions. Checked on every run, before the stamp, so a machine with the venv gets it.
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
  else
    echo "setup.sh: no chromium and not root with apt-get: the console tests will skip" >&2
  fi
fi

# The substrate's compiled sealer (setup.py, substrate/_native.c) links OpenSSL's libcrypto
# and zlib: install their headers when absent. Without them the build is skipped and
# every append seals in Python (the same bytes, slower).
if [ ! -f /usr/include/openssl/evp.h ] || [ ! -f /usr/include/zlib.h ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libssl-dev zlib1g-dev
  else
    echo "setup.sh: no OpenSSL/zlib headers and not root with apt-get: appends seal in Python" >&2
  fi
fi

stamp="$VENV/.solace-installed"
want="$(sha256sum pyproject.toml setup.py substrate/_native.c scripts/setup.sh | sha256sum | cut -c1-16)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi

pip install --quiet --upgrade pip wheel setuptools
# torch's CPU build first: sentence-transformers would otherwise pull a multi-GB
# CUDA build. 2.13.0 resolves to the CPU wheel on these machines.
pip install --quiet "torch==2.13.0"
# llama-cpp-python compiles llama.cpp (several minutes on two cores). Built for the
# machine's own CPU (GGML_NATIVE) it uses AMX / AVX-512 where the CPU lists them, and
# its decode then segfaults on some of these VMs: build a portable AVX2 wheel, never
# reuse a cached native one, and say so with a marker so a re-run skips the build.
if [ ! -f "$VENV/.llama-portable" ] || ! "$VENV/bin/python" -c "import llama_cpp" 2>/dev/null; then
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
-DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    pip install --quiet --no-cache-dir --force-reinstall --no-deps "llama-cpp-python==0.3.36"
  touch "$VENV/.llama-portable"
fi
pip install --quiet -e ".[dev]"
"$VENV/bin/python" -c "import substrate._native" 2>/dev/null \
  || echo "setup.sh: substrate._native was not built: appends seal in Python" >&2
echo "$want" > "$stamp"
