import configparser
cp = configparser.ConfigParser()
cp.read("config.ini")
print(cp.sections())
print(cp["database"]["host"], cp.getint("database", "port"))
print(cp.getboolean("cache", "enabled"), cp["cache"].getint("ttl_seconds") // 60)
