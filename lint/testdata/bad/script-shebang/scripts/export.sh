set -e
echo export
