"""Builds real PDFs with reportlab (embedded PNG and JPEG images, captions) for the PDF tests."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas


@dataclass
class Figure:
    path: Path
    color: tuple[int, int, int]
    size: tuple[int, int]


def make_image(
    path: Path, color: tuple[int, int, int], size=(240, 160), fmt: str | None = None
) -> Figure:
    """A solid image of ``color`` with a white diagonal bar (so it is not a flat fill)."""
    img = Image.new("RGB", size, color)
    ImageDraw.Draw(img).line((0, 0, size[0], size[1]), fill=(255, 255, 255), width=6)
    img.save(
        path,
        format=fmt,
        **({"quality": 90} if (fmt or path.suffix).lower().strip(".") in ("jpeg", "jpg") else {}),
    )
    return Figure(path, color, size)


def figures_pdf(tmp: Path) -> tuple[bytes, dict[str, Figure]]:
    """Three pages, four distinct figures, one repeated figure, one decoration icon.

    Page 1: text, figure A (PNG) with caption ``Figure 1: …``.
    Page 2: figure B (JPEG) with ``Fig. 2. …``, figure C (PNG) with ``Figure 3 …`` (no
    punctuation), and a 16×16 icon.
    Page 3: figure A again, and figure D (PNG) without caption.
    """
    figs = {
        "A": make_image(tmp / "a.png", (220, 40, 40)),
        "B": make_image(tmp / "b.jpg", (40, 160, 40), size=(320, 200)),
        "C": make_image(tmp / "c.png", (40, 40, 220), size=(200, 200)),
        "D": make_image(tmp / "d.png", (230, 200, 20), size=(180, 120)),
    }
    icon = tmp / "icon.png"
    Image.new("RGB", (16, 16), (0, 0, 0)).save(icon)
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    c.setTitle("Field report on training runs")
    c.drawString(72, 790, "Field report on training runs")
    c.drawString(72, 770, "This report describes the setup and results of three runs.")
    c.drawImage(str(figs["A"].path), 72, 560, width=240, height=160)
    c.drawString(72, 540, "Figure 1: Loss curve of the training run")
    c.drawString(72, 520, "As Figure 1 shows, the loss falls quickly in the first epoch.")
    c.showPage()
    c.drawString(72, 790, "Setup")
    c.drawImage(str(icon), 520, 790, width=16, height=16)
    c.drawImage(str(figs["B"].path), 72, 560, width=320, height=200)
    c.drawString(72, 540, "Fig. 2. Photo of the test rig")
    c.drawImage(str(figs["C"].path), 72, 300, width=200, height=200)
    c.drawString(72, 280, "Figure 3 Architecture overview")
    c.showPage()
    c.drawString(72, 790, "Appendix")
    c.drawImage(str(figs["A"].path), 72, 560, width=240, height=160)
    c.drawImage(str(figs["D"].path), 72, 300, width=180, height=120)
    c.showPage()
    c.save()
    return buf.getvalue(), figs


def text_pdf(pages: list[str], title: str | None = None) -> bytes:
    """A text-only PDF, one string per page (lines split on ``\\n``)."""
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    if title:
        c.setTitle(title)
    for page in pages:
        y = 790
        for line in page.split("\n"):
            c.drawString(72, y, line)
            y -= 16
        c.showPage()
    c.save()
    return buf.getvalue()


def many_figures_pdf(tmp: Path, count: int) -> bytes:
    """One page per figure, each a distinct colour."""
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    for k in range(count):
        fig = make_image(tmp / f"m{k}.png", (10 * k % 256, 100, 200), size=(64, 64))
        c.drawImage(str(fig.path), 72, 600, width=64, height=64)
        c.drawString(72, 580, f"Figure {k + 1}: panel {k + 1}")
        c.showPage()
    c.save()
    return buf.getvalue()


def two_figures_pdf(tmp: Path, first: str, second: str) -> tuple[bytes, dict[str, Figure]]:
    """One page drawing figure ``first`` then ``second`` (keys ``X``/``Y``), captions in that order."""
    figs = {
        "X": make_image(tmp / "x.png", (200, 0, 200), size=(100, 60)),
        "Y": make_image(tmp / "y.png", (0, 200, 200), size=(60, 100)),
    }
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    c.drawImage(str(figs[first].path), 72, 600, width=100, height=100)
    c.drawString(72, 580, f"Figure 1: figure {first}")
    c.drawImage(str(figs[second].path), 72, 400, width=100, height=100)
    c.drawString(72, 380, f"Figure 2: figure {second}")
    c.showPage()
    c.save()
    return buf.getvalue(), figs
