#!/usr/bin/env bash
# deps.sh — the one dependency step of dream, run by `make demo`, `make test` and `make bench`.
#
# Idempotent: installs only the Debian packages that are missing, and obtains llama.cpp at the
# pinned commit. A system llama.cpp is used only when it is exactly that commit; otherwise the
# pinned source comes from the npm package node-llama-cpp@3.22.1 (llama/gitRelease.bundle),
# verified by sha256, cloned, and built as static libraries. The build is cached outside the
# repository (DREAM_DEPS_CACHE, default ~/.cache/dream-deps), keyed by commit and options, so
# repeated runs and CI reuse it.
#
# Prints one line for the Makefile on stdout's last line: LLAMA_SRC=... LLAMA_BUILD=...
# DREAM_NODE_MODULES=... (the npm test clients, step 3)
# Environment: DREAM_CUDA=1 adds the CUDA backend (sm_90); DREAM_DEPS_TOOLS=1 also builds
# llama.cpp's benchmark tools (llama-bench, llama-batched-bench, llama-server) for `make bench`.
set -euo pipefail

LLAMA_COMMIT=de3ff815ea7d559ee917f063901b8986f038abc6
LLAMA_SHORT=${LLAMA_COMMIT:0:12}
NPM_PKG=node-llama-cpp@3.22.1
NPM_TGZ=node-llama-cpp-3.22.1.tgz
NPM_SHA256=a0d9dd80eacd2ab1cfe71aee57ac8a806487fd70b3d2a38fbec637752d9e5c5f
BUNDLE_SHA256=5f5d1105d5df040738d87b8290e5d17e7362131cdcfdb0831618e0ea528b4a51

CACHE=${DREAM_DEPS_CACHE:-$HOME/.cache/dream-deps}
JOBS=${JOBS:-$(nproc)}

say() { printf 'deps: %s\n' "$*" >&2; }
die() { printf 'deps: error: %s\n' "$*" >&2; exit 1; }

# --- 1. Debian packages -----------------------------------------------------------------------
PKGS=(build-essential cmake pkg-config git ca-certificates xz-utils
      libsqlite3-dev libjansson-dev libgit2-dev libmicrohttpd-dev libcurl4-openssl-dev
      libutf8proc-dev libcmocka-dev zlib1g-dev
      python3 python3-jinja2 nodejs npm wordnet-base wamerican
      clang libclang-rt-14-dev time)

missing=()
# DREAM_SKIP_APT=1: a machine that cannot reach Debian's registry (a GPU box building only the
# engine) skips the package step.
[ -n "${DREAM_SKIP_APT:-}" ] && PKGS=()
for p in "${PKGS[@]}"; do
  # a package counts as present when dpkg says installed, or (for node/npm, which are often
  # installed outside Debian) when its command is on PATH
  case $p in
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm)    command -v npm  >/dev/null 2>&1 && continue ;;
  esac
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  say "installing missing Debian packages: ${missing[*]}"
  SUDO=
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "missing packages (${missing[*]}) and not root; run: sudo apt-get install ${missing[*]}"
    SUDO=sudo
  fi
  $SUDO apt-get update -qq >/dev/null 2>&1 || die "apt-get update failed; check the network, then run: apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >"${TMPDIR:-/tmp}/dream-apt.log" 2>&1 \
    || die "apt-get install failed for: ${missing[*]} (log: ${TMPDIR:-/tmp}/dream-apt.log)"
fi

# --- 2. llama.cpp -----------------------------------------------------------------------------
# A system installation counts only if it records exactly the pinned commit.
if [ -z "${DREAM_CUDA:-}" ] && pkg-config --exists llama 2>/dev/null; then
  sys_commit=$(pkg-config --variable=commit llama 2>/dev/null || true)
  if [ "${sys_commit:0:12}" = "$LLAMA_SHORT" ]; then
    say "using system llama.cpp ($sys_commit)"
  else
    say "system llama.cpp found but not commit $LLAMA_SHORT (it says '${sys_commit:-unknown}'); using the pinned source"
  fi
fi

# One deps step at a time per cache: two checkouts (or two shells) building the same cache
# directory at once would interleave their compilers' writes into the same object files.
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
if ! flock -n 9; then
  say "another dependency step holds $CACHE/.lock; waiting for it"
  flock 9
fi

SRC=$CACHE/src/llama.cpp-$LLAMA_SHORT
if [ ! -f "$SRC/.dream-ok" ]; then
  mkdir -p "$CACHE/dl" "$CACHE/src"
  tgz=$CACHE/dl/$NPM_TGZ
  if [ ! -f "$tgz" ]; then
    say "fetching $NPM_PKG from the npm registry"
    (cd "$CACHE/dl" && npm pack --silent "$NPM_PKG" >/dev/null) || die "npm pack $NPM_PKG failed"
  fi
  got=$(sha256sum "$tgz" | cut -d' ' -f1)
  if [ "$got" != "$NPM_SHA256" ]; then
    rm -f "$tgz"
    die "checksum mismatch for $tgz: expected $NPM_SHA256, got $got (the file was removed; run again to re-fetch)"
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  tar -xzf "$tgz" -C "$tmp" package/llama/gitRelease.bundle
  got=$(sha256sum "$tmp/package/llama/gitRelease.bundle" | cut -d' ' -f1)
  [ "$got" = "$BUNDLE_SHA256" ] || die "checksum mismatch for llama/gitRelease.bundle in $tgz: expected $BUNDLE_SHA256, got $got"
  rm -rf "$SRC"
  git clone -q "$tmp/package/llama/gitRelease.bundle" "$SRC" 2>/dev/null || die "git clone of the llama.cpp bundle failed"
  (cd "$SRC" && git -c advice.detachedHead=false checkout -q "$LLAMA_COMMIT") || die "commit $LLAMA_COMMIT is not in the bundle"
  touch "$SRC/.dream-ok"
fi

# Options that change the build are part of the cache key.
opts=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF
      -DLLAMA_BUILD_COMMON=ON -DLLAMA_BUILD_EXAMPLES=ON -DLLAMA_BUILD_TOOLS=ON
      -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DGGML_CCACHE=OFF)
# CPU features: on x86-64, the machine's own vector extensions but never AMX. ggml's AMX path
# (picked by -march=native on CPUs that have AMX) crashes in ggml_backend_amx_mul_mat on small
# Q8_0 models — llama.cpp's own llama-simple segfaults the same way — so we name the features
# instead of using GGML_NATIVE. Elsewhere, native.
if [ "$(uname -m)" = x86_64 ]; then
  cpuflags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
  has() { [[ $cpuflags == *" $1 "* ]] && echo ON || echo OFF; }
  opts+=(-DGGML_NATIVE=OFF -DGGML_SSE42="$(has sse4_2)" -DGGML_F16C="$(has f16c)" -DGGML_FMA="$(has fma)"
         -DGGML_BMI2="$(has bmi2)" -DGGML_AVX="$(has avx)" -DGGML_AVX2="$(has avx2)" -DGGML_AVX_VNNI="$(has avx_vnni)"
         -DGGML_AVX512="$(has avx512f)" -DGGML_AVX512_VBMI="$(has avx512vbmi)" -DGGML_AVX512_VNNI="$(has avx512_vnni)"
         -DGGML_AVX512_BF16="$(has avx512_bf16)" -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
else
  opts+=(-DGGML_NATIVE=ON)
fi
flavor=cpu
if [ -n "${DREAM_CUDA:-}" ] && [ "${DREAM_CUDA}" != 0 ]; then
  command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] || die "DREAM_CUDA=1 but no nvcc found (install the CUDA toolkit or unset DREAM_CUDA)"
  opts+=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90)
  flavor=cuda90
fi
cpu_sig=$( (grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || uname -m) | sha256sum | cut -c1-8)
cc_sig=$( (cc --version 2>/dev/null | head -1; c++ --version 2>/dev/null | head -1) | sha256sum | cut -c1-8)
key=$(printf '%s\n' "${opts[@]}" | sha256sum | cut -c1-8)
BUILD=$CACHE/build/llama-$LLAMA_SHORT-$flavor-$key-$cpu_sig-$cc_sig

targets=(llama llama-simple)
# DREAM_DEPS_TOOLS=1: llama.cpp's benchmark tools and its server; =bench: the benchmark tools only
case ${DREAM_DEPS_TOOLS:-} in
  "" | 0) ;;
  bench) targets+=(llama-bench llama-batched-bench) ;;
  *) targets+=(llama-bench llama-batched-bench llama-server) ;;
esac

need=0
for t in "${targets[@]}"; do [ -f "$BUILD/.built-$t" ] || need=1; done
if ((need)); then
  say "building llama.cpp $LLAMA_SHORT ($flavor: ${targets[*]}) in $BUILD — a few minutes the first time"
  mkdir -p "$BUILD"
  if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    cmake -S "$SRC" -B "$BUILD" "${opts[@]}" >"$BUILD/configure.log" 2>&1 \
      || die "configuring llama.cpp failed; see $BUILD/configure.log"
  fi
  for t in "${targets[@]}"; do
    [ -f "$BUILD/.built-$t" ] && continue
    # llama-server (the serve benchmark's baseline) needs its directory switched on in the same
    # tree; the option adds the server's targets and changes no library's flags, so nothing
    # already built is rebuilt and the cache key stays the same.
    if [ "$t" = llama-server ]; then
      cmake -S "$SRC" -B "$BUILD" -DLLAMA_BUILD_SERVER=ON >>"$BUILD/configure.log" 2>&1 \
        || die "configuring llama.cpp's server failed; see $BUILD/configure.log"
    fi
    cmake --build "$BUILD" --target "$t" -j "$JOBS" >"$BUILD/build-$t.log" 2>&1 \
      || die "building llama.cpp target $t failed; see $BUILD/build-$t.log"
    touch "$BUILD/.built-$t"
  done
fi

# --- 3. npm test clients ----------------------------------------------------------------------
# The official MCP TypeScript SDK, whose client tests/mcp runs against `dream mcp` and
# `dream serve`, and a Markdown parser that reads a vault as Obsidian does (tests/obsidian:
# unified with remark-parse, remark-gfm for footnotes, remark-frontmatter and yaml for the front
# matter, @flowershow/remark-wiki-link for [[wikilinks]]; its 4.0.0 names a dependency that was
# never published, so 3.4.0), pinned and installed once into the cache (keyed by the package
# list). Printed as DREAM_NODE_MODULES for the Makefile to hand to CMake. DREAM_SKIP_NODE=1 (or a
# machine without npm that skips the Debian step) goes without; those tests then fail saying so.
NODE_PKGS=(@modelcontextprotocol/sdk@1.32.2 unified@11.0.5 remark-parse@11.0.0 remark-gfm@4.0.1 remark-frontmatter@5.0.0 yaml@2.8.1
           @flowershow/remark-wiki-link@3.4.0)
NODE_MODULES=
if [ -z "${DREAM_SKIP_NODE:-}" ] && { [ -z "${DREAM_SKIP_APT:-}" ] || command -v npm >/dev/null 2>&1; }; then
  NODE_DIR=$CACHE/node/node-$(printf '%s\n' "${NODE_PKGS[@]}" | sha256sum | cut -c1-8)
  if [ ! -f "$NODE_DIR/.dream-ok" ]; then
    command -v npm >/dev/null 2>&1 || die "npm is needed for the test clients (${NODE_PKGS[*]}); run: apt-get install npm"
    say "installing the npm test clients: ${NODE_PKGS[*]}"
    rm -rf "$NODE_DIR" && mkdir -p "$NODE_DIR"
    (cd "$NODE_DIR" && echo '{"private": true}' >package.json \
       && npm install --no-audit --no-fund --save-exact --silent "${NODE_PKGS[@]}" >"$NODE_DIR/npm.log" 2>&1) \
      || die "npm install ${NODE_PKGS[*]} failed (is the npm registry reachable?); see $NODE_DIR/npm.log"
    touch "$NODE_DIR/.dream-ok"
  fi
  NODE_MODULES=$NODE_DIR/node_modules
fi

echo "LLAMA_SRC=$SRC LLAMA_BUILD=$BUILD DREAM_NODE_MODULES=$NODE_MODULES"
