import requests
BASE = "https://api.github.com"
requests.get("https://uploads.evil-host.net/x")
requests.get("https://registry.acme-corp.io:9000/x")
requests.get("https://api.github.com:2222/x")
