from datetime import datetime, timezone, timedelta
utc = datetime(2024, 6, 1, 12, 0, tzinfo=timezone.utc)
ist = timezone(timedelta(hours=5, minutes=30), "IST")
print(utc.isoformat())
print(utc.astimezone(ist).isoformat(), utc.astimezone(ist).tzname())
print(datetime.fromisoformat("2024-06-01T08:00:00+02:00").astimezone(timezone.utc))
print(datetime.fromtimestamp(0, tz=timezone.utc))
print(int(utc.timestamp()))
