import json
with open("people.json") as f:
    people = json.load(f)
oldest = max(people, key=lambda p: p["age"])
print("oldest:", oldest["name"], oldest["age"])
by_city = {}
for p in people:
    by_city.setdefault(p["city"], []).append(p["name"])
print(json.dumps(by_city, indent=2, sort_keys=True))
print(sum(len(p["skills"]) for p in people) / len(people))
