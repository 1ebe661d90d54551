from datetime import date, datetime, timedelta
d = date(2024, 2, 28)
print(d + timedelta(days=1), d + timedelta(days=2))
print(d.isoformat(), d.weekday(), d.isoweekday(), d.strftime("%d/%m/%Y %a %B"))
dt = datetime(2024, 3, 10, 14, 30, 5)
print(dt.strftime("%Y-%m-%d %H:%M:%S"), dt.isoformat())
print(datetime.strptime("2023-12-31 23:59", "%Y-%m-%d %H:%M") + timedelta(minutes=1))
print((date(2024, 12, 25) - date(2024, 1, 1)).days)
print(dt.replace(hour=0).time(), dt.date().toordinal())
