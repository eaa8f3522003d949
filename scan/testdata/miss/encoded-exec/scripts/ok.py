import base64
data = base64.b64decode(blob)
result = evaluate(data)
