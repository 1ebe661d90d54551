import struct
packed = struct.pack("<IhB3s", 1, -2, 255, b"abc")
print(packed.hex(), len(packed), struct.calcsize("<IhB3s"))
print(struct.unpack("<IhB3s", packed))
print(bytes([72, 105]).decode(), bytearray(b"abc").upper(), b"a,b".split(b","))
print("é".encode("utf-8"), "é".encode("latin-1"), b"\xc3\xa9".decode())
print(memoryview(b"abcdef")[1:3].tobytes())
