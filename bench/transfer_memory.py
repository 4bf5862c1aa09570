"""Peak memory of exporting and re-importing a profile that holds ``--mb`` megabytes of images.

The profile is built in its own process: ``--mb`` screenshots of about 1 MB each (600×600 RGB
noise PNGs: eight Pillow noise images reused, each copy made distinct by a few changed pixels, so
every image is its own blob), one per user entry, with a 60-entry live window, so almost all of
them sit in the archive. Then, each in a fresh process, ``store.export_to(file)`` (streaming)
and ``store.import_from(file)`` into an empty store run, then the console script the user runs:
``chatkeep export -o FILE`` and ``chatkeep import FILE`` into another empty store. The table shows
each process's peak resident memory (``VmHWM``, :mod:`bench.peak`) next to the image volume. The
CLI runs in a child ``python -c`` that calls the console script's entry point
(``chatkeep.cli.main:main``, what the installed ``chatkeep`` script runs) with the command's
arguments and writes its own ``VmHWM`` to a file from an ``atexit`` hook, so the figure covers
the whole command — start-up, Click, the export or import — and nothing of this process. Target: under 300 MB for 1 GB
(``--mb 1024``, the default; ``--mb 100`` for a quick run). Byte counts are reported, never
asserted.

Run: ``python -m bench.transfer_memory [--mb N] [--store-dir DIR]``.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
import time

from bench.peak import PEAK_RSS

BUILD = r"""
import io, random, sys, base64
from PIL import Image
import chatkeep
path, mb = sys.argv[1], int(sys.argv[2])
rnd = random.Random(3)
bases = [Image.frombytes("RGB", (600, 600), rnd.randbytes(600 * 600 * 3)) for _ in range(8)]
with chatkeep.open(path) as s:
    s.local.set("maxHistoryEntries", 60)
    for i in range(mb):
        img = bases[i % 8].copy()
        img.putpixel((i % 600, (i // 600) % 600), (i % 256, 7, 9))
        buf = io.BytesIO()
        img.save(buf, "PNG", compress_level=1)
        url = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
        s.history.append({"role": "user", "content": [
            {"type": "text", "text": f"screenshot {i}"},
            {"type": "image_url", "image_url": {"url": url}}]})
    print(s.stats()["blobBytes"])
"""

EXPORT = (
    PEAK_RSS
    + r"""
import sys, chatkeep
with chatkeep.open(sys.argv[1]) as s, open(sys.argv[2], "w", encoding="utf-8") as fh:
    s.export_to(fh)
print(peak_rss())
"""
)

IMPORT = (
    PEAK_RSS
    + r"""
import sys, chatkeep
with chatkeep.open(sys.argv[1]) as s, open(sys.argv[2], encoding="utf-8") as fh:
    s.import_from(fh)
print(peak_rss())
"""
)

CLI = (
    PEAK_RSS
    + r"""
import atexit, sys
out = sys.argv.pop(1)
def _report():
    with open(out, "w") as fh:
        fh.write(str(peak_rss()))
atexit.register(_report)
sys.argv[0] = "chatkeep"
from chatkeep.cli.main import main
main()
"""
)

BASELINE = (
    PEAK_RSS
    + r"""
import chatkeep
print(peak_rss())
"""
)


def _run(code: str, *args: str) -> tuple[int, float]:
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    return int(out.stdout.split()[-1]), time.perf_counter() - t0


def _cli(root: str, *args: str) -> tuple[int, float]:
    """Run ``chatkeep ARGS…`` (the console script's entry point) in a child; its peak and time."""
    peak_file = os.path.join(root, "cli-peak")
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", CLI, peak_file, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")},
    )
    elapsed = time.perf_counter() - t0
    with open(peak_file) as fh:
        return int(fh.read()), elapsed


def main(argv: list[str] | None = None) -> dict[str, int]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=int, default=1024, help="megabytes of images (about)")
    ap.add_argument("--store-dir", help="directory for the stores (default: a temporary one)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="chatkeep-xfer-", dir=args.store_dir) as root:
        src, dst = os.path.join(root, "src.db"), os.path.join(root, "dst.db")
        doc = os.path.join(root, "export.json")
        print(f"building a profile with ~{args.mb} MB of images …", file=sys.stderr, flush=True)
        blob_bytes, t_build = _run(BUILD, src, str(args.mb))
        base, _ = _run(BASELINE)
        exp, t_exp = _run(EXPORT, src, doc)
        size = os.path.getsize(doc)
        imp, t_imp = _run(IMPORT, dst, doc)
        os.unlink(dst)
        cli_doc, cli_dst = os.path.join(root, "cli-export.json"), os.path.join(root, "cli.db")
        cli_exp, t_cli_exp = _cli(root, "--store", src, "export", "-o", cli_doc)
        cli_size = os.path.getsize(cli_doc)
        same = filecmp.cmp(doc, cli_doc, shallow=False)
        os.unlink(doc)
        cli_imp, t_cli_imp = _cli(root, "--store", cli_dst, "import", cli_doc)
    mb = 1024 * 1024
    print(
        f"\nTransfer memory — {blob_bytes / mb:,.0f} MB of image bytes, export file {size / mb:,.0f} MB"
    )
    print(
        f"chatkeep export file {cli_size / mb:,.0f} MB, "
        + ("byte-identical to export_to's" if same else "DIFFERENT from export_to's")
    )
    print(f"{'step':<28} {'peak RSS':>10} {'time':>8}  target")
    print(f"{'python + import chatkeep':<28} {base / mb:>7.0f} MB {'':>8}")
    for name, rss, t in (
        ("export_to (stream)", exp, t_exp),
        ("import_from (stream)", imp, t_imp),
        ("chatkeep export -o FILE", cli_exp, t_cli_exp),
        ("chatkeep import FILE", cli_imp, t_cli_imp),
    ):
        verdict = "< 300 MB " + ("met" if rss < 300 * mb else "NOT met")
        print(f"{name:<28} {rss / mb:>7.0f} MB {t:>6.1f} s  {verdict}")
    print(f"(build: {t_build:.0f} s)")
    return {
        "imageBytes": blob_bytes,
        "exportFile": size,
        "exportRss": exp,
        "importRss": imp,
        "cliExportFile": cli_size,
        "cliExportRss": cli_exp,
        "cliExportSame": int(same),
        "cliImportRss": cli_imp,
    }


if __name__ == "__main__":
    main()
