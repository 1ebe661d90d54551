import calendar
print(calendar.isleap(2024), calendar.isleap(1900), calendar.leapdays(2000, 2025))
print(calendar.monthrange(2024, 2))
print(calendar.month(2024, 2))
print(list(calendar.day_name)[:3])
