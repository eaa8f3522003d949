#!/bin/sh
# Print commit subjects between two refs as Markdown, grouped by
# conventional-commit type. FROM defaults to the latest tag (or the first
# commit), TO to HEAD.
set -eu
to=${2:-HEAD}
if [ $# -ge 1 ]; then
	from=$1
else
	from=$(git describe --tags --abbrev=0 "$to" 2>/dev/null || git rev-list --max-parents=0 "$to" | tail -n 1)
fi
git log --no-merges --format='%s' "$from..$to" | awk '
/^[a-z]+(\([^)]*\))?!:/ { breaking[++nb] = $0; next }
/^feat(\([^)]*\))?:/    { feat[++nf] = $0; next }
/^fix(\([^)]*\))?:/     { fix[++nx] = $0; next }
                        { other[++no] = $0 }
function section(title, arr, n,   i) {
	if (n == 0) return
	printf "## %s\n\n", title
	for (i = 1; i <= n; i++) printf "- %s\n", arr[i]
	printf "\n"
}
END {
	section("Breaking", breaking, nb)
	section("Features", feat, nf)
	section("Fixes", fix, nx)
	section("Other changes", other, no)
	if (nb + nf + nx + no == 0) print "No changes."
}'
