#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the build into a scratch prefix, then builds a small C program
# against it twice: with find_package(tailor) and with pkg-config, and runs
# both. Usage: package_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1") src=$(realpath "$2")
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tailor-package.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build" --prefix "$scratch/prefix" > /dev/null
export LD_LIBRARY_PATH="$scratch/prefix/lib"
cmake -S "$src" -B "$scratch/cm" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" > /dev/null
cmake --build "$scratch/cm" > /dev/null
"$scratch/cm/consumer"
export PKG_CONFIG_PATH="$scratch/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -o "$scratch/pc_consumer" "$src/consumer.c" $(pkg-config --cflags --libs tailor)
"$scratch/pc_consumer"
