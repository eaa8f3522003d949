#!/bin/sh
# Summarize a CSV file: rows, columns, empty cells per column, sample rows.
set -eu
if [ $# -ne 1 ] || [ ! -r "$1" ]; then
	echo "usage: csv-summary.sh FILE.csv" >&2
	exit 2
fi
awk -F, '
NR == 1 {
	cols = NF
	for (i = 1; i <= NF; i++) { name[i] = $i; empty[i] = 0 }
	next
}
{
	rows++
	if (NF != cols) ragged++
	for (i = 1; i <= cols; i++) if ($i == "") empty[i]++
	if (rows <= 3) sample[rows] = $0
}
END {
	printf "rows: %d\ncolumns: %d\n", rows, cols
	if (ragged > 0) printf "warning: %d rows do not have %d columns\n", ragged, cols
	print "headers (empty cells):"
	for (i = 1; i <= cols; i++) printf "  %s (%d)\n", name[i], empty[i]
	print "sample:"
	for (i = 1; i <= rows && i <= 3; i++) printf "  %s\n", sample[i]
}' "$1"
