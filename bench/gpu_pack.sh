#!/usr/bin/env bash
# gpu_pack.sh — packs, on this machine, what bench/gpu.sh needs on the GPU machine and cannot fetch
# there, into .devsrc/ (git-ignored; name it in the device tool's `carry`):
#   llama.tar.xz   the pinned llama.cpp source from the deps cache (make deps), without .git, docs,
#                  other backends and vocabularies but Gemma 4's (~11 MB; the npm tarball, 35.7 MB,
#                  no longer fits the 64 MiB carry beside the tree)
#   sysroot.tar.xz headers, pkg-config files and shared libraries of the memory layer's -dev
#                  packages (sqlite3, jansson, libgit2, libmicrohttpd, libutf8proc, cmocka) and the
#                  libraries they need, for `gpu.sh pipeline` on a machine without them (~7 MB)
#   corpus32/      a generated corpus for `gpu.sh pipeline` (needs wordnet-base here)
# Then on the device: bench/gpu.sh build && CORPUS=$PWD/.devsrc/corpus32 bench/gpu.sh pipeline
set -euo pipefail
cd "$(dirname "$0")/.."
D=.devsrc
mkdir -p "$D" .git/info
grep -qx '/.devsrc/' .git/info/exclude 2>/dev/null || echo '/.devsrc/' >> .git/info/exclude
grep -qx '/.devbuild/' .git/info/exclude 2>/dev/null || echo '/.devbuild/' >> .git/info/exclude
CACHE=${DREAM_DEPS_CACHE:-$HOME/.cache/dream-deps}
src=$(ls -d "$CACHE"/src/llama.cpp-* | head -n1)
[ -f "$src/.dream-ok" ] || { echo "gpu_pack.sh: no llama.cpp source in $CACHE (run make deps first)" >&2; exit 1; }
name=$(basename "$src")
if [ ! -f "$D/llama.tar.xz" ]; then
  ex=(--exclude="$name/.git" --exclude="$name/docs" --exclude="$name/benches" --exclude="$name/tools/server/public*"
      --exclude="$name/tools/server/webui")
  for b in cann hexagon hip metal musa opencl openvino sycl virtgpu vulkan webgpu zdnn zendnn et; do ex+=(--exclude="$name/ggml/src/ggml-$b"); done
  # models/: Gemma 4's vocabulary and chat template only
  ex+=(--exclude="$name/models")
  tar -C "$(dirname "$src")" "${ex[@]}" -cf "$D/llama.tar" "$name"
  tar -C "$(dirname "$src")" -rf "$D/llama.tar" "$name/models/ggml-vocab-gemma-4.gguf" "$name/models/templates/google-gemma-4-31B-it.jinja"
  xz -T2 -6 -f "$D/llama.tar"
fi
if [ ! -f "$D/sysroot.tar.xz" ]; then
  [ -x build/bin/bench_pipeline ] || { echo "gpu_pack.sh: build/bin/bench_pipeline is missing (make build)" >&2; exit 1; }
  T=$(mktemp -d); SR=$T/sysroot; mkdir -p "$SR"/{all,include,pc,dev}
  for l in $(ldd build/bin/bench_pipeline | awk '$3 ~ /^\// {print $3}') /usr/lib/x86_64-linux-gnu/libmicrohttpd.so.12 /usr/lib/x86_64-linux-gnu/libcmocka.so.0; do
    case $(basename "$l") in libc.so*|libm.so*|libstdc++*|libgcc_s*|libgomp*|libresolv*|ld-linux*) continue ;; esac
    cp -L "$l" "$SR/all/"
  done
  (cd /usr/include && cp -r sqlite3.h sqlite3ext.h jansson.h jansson_config.h git2.h git2 microhttpd.h utf8proc.h cmocka.h cmocka_pbc.h "$SR/include/")
  pc() { printf 'prefix=@SR@\nName: %s\nDescription: carried by gpu_pack.sh\nVersion: %s\nCflags: -I${prefix}/include\nLibs: -L${prefix}/dev -l%s\n' \
           "$1" "$(pkg-config --modversion "$1")" "$2" > "$SR/pc/$1.pc"; ln -sf "../all/$3" "$SR/dev/lib$2.so"; }
  pc sqlite3 sqlite3 libsqlite3.so.0; pc jansson jansson libjansson.so.4; pc libgit2 git2 libgit2.so.1.5
  pc libmicrohttpd microhttpd libmicrohttpd.so.12; pc libutf8proc utf8proc libutf8proc.so.2; pc cmocka cmocka libcmocka.so.0
  tar -C "$T" -cJf "$D/sysroot.tar.xz" sysroot
  rm -rf "$T"
fi
[ -f "$D/corpus32/truth.json" ] || python3 train/gen_corpus.py --seed 1 --catalogue train --conversations 32 --out "$D/corpus32" >/dev/null
du -sh "$D"/*
