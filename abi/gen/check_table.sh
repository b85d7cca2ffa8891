#!/bin/sh
# check_table.sh LANG TABLE TABLES_PY RESULTS_JSON ZLINK_MAP — the drift test
# of one binding's generated table (tables.bzl).
set -eu
lang=$1 table=$2 gen=$3 results=$4 map=$5
exec python3 "$gen" --lang "$lang" --check "$table" "$results" "$map"
