#!/usr/bin/env bash
# Downloads a cities dataset from its official source into datasets/.
#   datasets/download.sh small   the okfn world-cities CSV (CC BY 4.0, GeoNames)
#   datasets/download.sh large   GeoNames' cities500.zip (CC BY 4.0)
# MaxMind's world cities file is no longer published; import your own copy
# with `cityfinder import --dataset large --file worldcitiespop.txt.gz`.
set -euo pipefail
cd "$(dirname "$0")"
OKFN_URL="https://raw.githubusercontent.com/datasets/world-cities/master/data/world-cities.csv"

case "${1:-small}" in
small)
	tmp=$(mktemp world-cities.csv.XXXXXX)
	trap 'rm -f "$tmp"' EXIT
	echo "downloading $OKFN_URL"
	if ! curl -fsSL --max-time 120 -o "$tmp" "$OKFN_URL"; then
		echo "download of $OKFN_URL failed: without internet, put the CSV at datasets/world-cities.csv" >&2
		echo "or set DATASETS_MIRROR to a directory holding world-cities.csv, or import with --file PATH" >&2
		exit 1
	fi
	mv "$tmp" world-cities.csv
	trap - EXIT
	echo "saved datasets/world-cities.csv"
	;;
large)
	# GeoNames' cities500 (CC BY 4.0), which `cityfinder import --dataset large`
	# also downloads itself without --file (into --download-dir, once).
	url="https://download.geonames.org/export/dump/cities500.zip"
	tmp=$(mktemp cities500.zip.XXXXXX)
	trap 'rm -f "$tmp"' EXIT
	echo "downloading $url"
	if ! curl -fsSL --max-time 600 -o "$tmp" "$url"; then
		echo "download of $url failed: import a local copy with" >&2
		echo "  cityfinder import --dataset large --file cities500.zip (or MaxMind's worldcitiespop.txt.gz)" >&2
		exit 1
	fi
	mv "$tmp" cities500.zip
	trap - EXIT
	echo "saved datasets/cities500.zip"
	;;
*)
	echo "usage: $0 small|large" >&2
	exit 2
	;;
esac
