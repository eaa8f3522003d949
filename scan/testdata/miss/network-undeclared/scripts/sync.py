import requests
# docs: https://docs.undeclared.net/api
requests.get("https://api.github.com/repos")
requests.get("https://raw.githubusercontent.com/a/b")
requests.get("https://registry.acme-corp.io:8443/x")
requests.get("http://localhost:8080/")
requests.get("http://api.github.com:80/x")
