"""Write the TypeScript examples of the README and the client guide, as written, into a folder that `tsc` type-checks
against the generated schema with the project's own compiler settings (`.ci/clients.sh`): an example that does not
compile for its reader fails CI. Usage: `python clients/doc_examples.py OUT_DIR` (after clients/generate.sh)."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = (ROOT / "README.md", ROOT / "docs" / "integrate" / "clients.md")
TYPESCRIPT_BLOCK = re.compile(r"^```ts\n(.*?)^```", re.MULTILINE | re.DOTALL)
TYPESCRIPT = ROOT / "clients" / "typescript"


def main(out: Path) -> int:
    """One file per example beside a copy of the generated `schema.d.ts`, which they import as `./schema.js`."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    shutil.copy(ROOT / "var" / "clients" / "typescript" / "schema.d.ts", out / "schema.d.ts")
    (out / "node_modules").symlink_to(TYPESCRIPT / "node_modules")
    (out / "package.json").write_text(json.dumps({"type": "module"}))
    files = ["schema.d.ts"]
    for document in DOCUMENTS:
        for number, block in enumerate(TYPESCRIPT_BLOCK.findall(document.read_text()), 1):
            name = f"{document.stem}-{number}.ts"
            (out / name).write_text(block)
            files.append(name)
    if len(files) < len(DOCUMENTS) + 1:
        print("error: a document lost its TypeScript example", file=sys.stderr)
        return 1
    settings = json.loads((TYPESCRIPT / "tsconfig.json").read_text())["compilerOptions"]
    settings = {**{k: v for k, v in settings.items() if k not in ("rootDir", "outDir")}, "noEmit": True}
    (out / "tsconfig.json").write_text(json.dumps({"compilerOptions": settings, "files": files}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1])))
