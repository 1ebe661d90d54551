import pprint, copy
data = {"users": [{"name": "ada", "roles": ["admin", "dev"], "meta": {"age": 36}}] * 2, "count": 2}
pprint.pprint(data, width=60)
deep = copy.deepcopy(data)
deep["users"][0]["roles"].append("ops")
print(data["users"][0]["roles"], deep["users"][0]["roles"])
shallow = copy.copy(data)
print(shallow["users"] is data["users"])
