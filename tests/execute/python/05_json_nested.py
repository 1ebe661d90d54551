import json
from pathlib import Path
manifest = json.loads(Path("nested/manifest.json").read_text())
print(manifest["version"])
for item in manifest["items"]:
    print(item["id"], ",".join(item["tags"]) or "(none)")
print(json.dumps(manifest, separators=(",", ":")))
print(json.dumps({"b": [1.5, None, True], "a": "é"}, ensure_ascii=True, sort_keys=True))
