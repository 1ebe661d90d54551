import zlib, gzip
data = b"hello " * 100
c = zlib.compress(data)
print(len(data), zlib.decompress(c) == data, zlib.crc32(b"hello"), zlib.adler32(b"hello"))
g = gzip.compress(b"payload", mtime=0)
print(gzip.decompress(g))
