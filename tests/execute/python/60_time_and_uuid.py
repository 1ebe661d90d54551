import time, uuid
start = time.perf_counter()
x = sum(range(1000))
print(x, time.perf_counter() >= start, time.monotonic() > 0)
print(uuid.UUID("12345678-1234-5678-1234-567812345678").hex, uuid.uuid5(uuid.NAMESPACE_DNS, "python.org"))
print(time.strftime("%Y-%m-%d", time.gmtime(0)), time.gmtime(86400 * 365).tm_year)
