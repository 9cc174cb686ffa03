#!/usr/bin/env bash
# Compiles the OnyxRuntime assembly with mono's mcs. Usage: build.sh OUT.dll
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mcs -langversion:7.2 -unsafe -optimize+ -warnaserror+ -target:library \
  -out:"$1" "$HERE"/src/*.cs
