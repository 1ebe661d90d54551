# The code's own modules beside the data: a package in the working directory,
# and a module from a folder the code puts on sys.path.
import sys

import toolkit
from toolkit.text import slug

sys.path.append("modules")
import helpers

print(toolkit.VERSION, toolkit.mean([1, 2, 3, 4]))
print(slug("Hello, Sandboxed World!"))
print(helpers.summary(helpers.column("sales.csv", "units")))
print(helpers.__name__, toolkit.stats.__name__, toolkit.text.__package__)
print(helpers.__file__.replace("\\", "/").endswith("modules/helpers.py"))
try:
    import not_a_module_anywhere
except ModuleNotFoundError as e:
    print(type(e).__name__, e.name)
