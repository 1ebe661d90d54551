import string
print(string.ascii_lowercase, string.digits, string.punctuation)
t = string.Template("Hello $name, you owe $$${amount}")
print(t.substitute(name="Ada", amount=5))
print(string.capwords("hello   big world"))
print("".join(c for c in "Hello, World! 123" if c in string.ascii_letters))
