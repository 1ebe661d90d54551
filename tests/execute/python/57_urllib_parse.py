from urllib.parse import urlparse, urlencode, parse_qs, quote, unquote, urljoin
u = urlparse("https://user@example.com:8080/a/b?x=1&y=two#frag")
print(u.scheme, u.hostname, u.port, u.path, u.query, u.fragment)
print(parse_qs(u.query), urlencode({"q": "a b", "n": 3}))
print(quote("a b/c?"), unquote("%41%20b"), urljoin("https://x.org/a/b", "../c"))
