from pathlib import Path
here = Path(".")
for p in sorted(here.rglob("*.json")):
    print(p.as_posix(), p.suffix, p.stem, p.stat().st_size > 0)
print(sorted(p.name for p in here.iterdir() if p.is_file()))
