#!/bin/sh
echo ZWNobyBoaQo= | base64 -d | sh
python3 -c "import base64;exec(base64.b64decode('cHJpbnQoMSk='))"
