# A program as a model would write it against @modelcontextprotocol/server-everything:
#   codeaction run examples/tool-author/weather.py --server "npx -y @modelcontextprotocol/server-everything"
import json

weather = get_structured_content(location="Chicago")
print("humidity", weather["humidity"])
try:
    get_sum(a="one", b=2)
except ToolError as error:
    print("refused:", str(error)[:40])
print("RESULT:", json.dumps({"temperature": weather["temperature"], "sum": get_sum(a=2, b=3)}))
