"""Peak memory of `compliance-api wtta import URL` for a 100,000- and a 1,000,000-row register served over HTTP.

The registers (`bench/wtta_generate.py`) are served by a local `http.server` on 127.0.0.1; each import is a separate
`compliance-api wtta import http://127.0.0.1:PORT/FILE --quiet --json` process on a fresh SQLite database, and its
peak resident memory is the child's own `ru_maxrss` (from `os.wait4`, so no other child counts). Streaming means the
1,000,000-row peak stays close to the 100,000-row peak and far below the file size. Target: peak < 500 MB.

    .venv/bin/python bench/wtta_url_memory.py [--rows 100000 1000000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from harness import CLI, SECRET_KEY

HERE = Path(__file__).parent
TARGET_MB = 500


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return


@contextmanager
def serving(folder: Path) -> Iterator[str]:
    """`folder` over HTTP on 127.0.0.1 (a free port), in a thread of this process; yields the base URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def measured_import(url: str, var_dir: Path) -> dict[str, object]:
    """Run one import process; its wall time, its own peak RSS and its JSON result."""
    env = {
        **os.environ,
        "COMPLIANCE_SECRET_KEY": SECRET_KEY,
        "COMPLIANCE_VAR_DIR": str(var_dir),
        "DATABASE_URL": "",
        "REDIS_URL": "",
    }
    command = [str(CLI), "wtta", "import", url, "--quiet", "--json"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if process.returncode != 0:
            raise SystemExit(f"import of {url} failed ({process.returncode}):\n{err.read().decode()}")
        result = json.loads(out.read())
    return {"seconds": seconds, "peak_mb": usage.ru_maxrss / 1024, "result": result}  # ru_maxrss is in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it (registers, SQLite files)")
    args = parser.parse_args()
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="wtta-url-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    for rows in args.rows:
        register = workdir / f"register-{rows}.csv"
        if not register.exists():
            subprocess.run(
                [sys.executable, str(HERE / "wtta_generate.py"), str(register), "--rows", str(rows)], check=True
            )
    print("| rows | file size | wall time | peak RSS of the import | peak / file size | rows imported |")
    print("|---:|---:|---:|---:|---:|---:|")
    peaks = {}
    with serving(workdir) as base:
        for rows in args.rows:
            register = workdir / f"register-{rows}.csv"
            run = measured_import(f"{base}/{register.name}", workdir / f"sqlite-{rows}")
            result = run["result"]
            assert isinstance(result, dict)
            size_mb = register.stat().st_size / (1 << 20)
            peak = float(run["peak_mb"])  # type: ignore[arg-type]
            peaks[rows] = peak
            print(
                f"| {rows:,} | {size_mb:.1f} MB | {run['seconds']:.1f} s | {peak:.0f} MB | {peak / size_mb:.2f} | "
                f"{result['rows_created']:,} |",
                flush=True,
            )
    smallest, largest = min(peaks), max(peaks)
    print()
    print(f"peak({largest:,}) / peak({smallest:,}) = {peaks[largest] / peaks[smallest]:.2f}")
    print(f"peak < {TARGET_MB} MB: {'yes' if max(peaks.values()) < TARGET_MB else 'NO'}")


if __name__ == "__main__":
    main()
