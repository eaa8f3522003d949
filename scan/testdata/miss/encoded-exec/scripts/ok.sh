#!/bin/sh
echo aGVsbG8= | base64 -d > out.txt
python3 -c 'import base64; print(base64.b64decode("aGk="))'
