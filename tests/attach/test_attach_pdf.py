"""PDF extraction: page markers, figures in order, captions, the ## Figures tail, bad PDFs."""

from __future__ import annotations

import base64
import io
import re
import shutil

import pytest
from attach_pdfgen import figures_pdf, many_figures_pdf, text_pdf, two_figures_pdf
from PIL import Image
from pypdf import PdfReader, PdfWriter

from chatkeep.attach import extract_file, extract_pdf_bytes
from chatkeep.attach.pdf import FIGURES_INTRO, _page_captions, figures_section
from chatkeep.entries import validate_entry
from chatkeep.errors import AttachError
from chatkeep.rules.labels import parse_figure_labels

EXPECTED_CAPTIONS = (
    "Figure 1: Loss curve of the training run",
    "Fig. 2. Photo of the test rig",
    "Figure 3 Architecture overview",
    "Figure on page 3",
)


def _decode(url: str) -> Image.Image:
    header, b64 = url.split(",", 1)
    return Image.open(io.BytesIO(base64.b64decode(b64)))


def _close(a: tuple[int, ...], b: tuple[int, ...], tol: int = 12) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=False))


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("figpdf")
    data, figs = figures_pdf(tmp)
    return data, figs, extract_pdf_bytes(data, name="report.pdf")


def test_page_markers_one_per_page_in_order(figures):
    """Every page gets exactly one [Page N] line, N 1-based and increasing."""
    *_, ex = figures
    assert re.findall(r"^\[Page (\d+)\]$", ex.text, re.M) == ["1", "2", "3"]
    assert ex.text.startswith("[Page 1]\nField report on training runs")
    assert ex.text.index("Fig. 2. Photo") > ex.text.index("[Page 2]")


def test_figures_in_document_order_skipping_icons_and_repeats(figures):
    """Figures come page by page in draw order; the 16 px icon and the repeated figure are skipped."""
    _, figs, ex = figures
    assert len(ex.images) == 4
    expected = [figs["A"], figs["B"], figs["C"], figs["D"]]
    for url, fig in zip(ex.images, expected, strict=True):
        img = _decode(url).convert("RGB")
        assert img.size == fig.size
        assert _close(img.getpixel((fig.size[0] - 5, 5)), fig.color)


def test_jpeg_figure_stays_jpeg_byte_for_byte(figures):
    """A JPEG embedded in the PDF comes back as the same JPEG bytes; others become PNG."""
    _, figs, ex = figures
    assert ex.images[1].startswith("data:image/jpeg;base64,")
    assert base64.b64decode(ex.images[1].split(",", 1)[1]) == figs["B"].path.read_bytes()
    for k in (0, 2, 3):
        assert ex.images[k].startswith("data:image/png;base64,")


def test_captions_matched_per_page_with_fallback(figures):
    """Captions come from the page text in order; a figure without one is 'Figure on page N'."""
    *_, ex = figures
    assert ex.captions == EXPECTED_CAPTIONS


def test_figures_section_is_exact_and_parseable(figures):
    """The text ends with the spec's ## Figures list, which parse_figure_labels reads back."""
    *_, ex = figures
    tail = (
        "\n\n## Figures\n"
        + FIGURES_INTRO
        + "\n"
        + "\n".join(f"{k}. {c}" for k, c in enumerate(EXPECTED_CAPTIONS, 1))
    )
    assert ex.text.endswith(tail)
    assert ex.text.count("## Figures") == 1
    assert parse_figure_labels(ex.text) == list(EXPECTED_CAPTIONS)


def test_result_fields_and_valid_entry(figures):
    """kind/fmt/title are set and the figures form a valid history entry."""
    *_, ex = figures
    assert (ex.kind, ex.fmt, ex.title, ex.truncated, ex.video_src) == (
        "pdf",
        "pdf",
        "Field report on training runs",
        False,
        None,
    )
    content = [{"type": "text", "text": ex.text}] + [
        {"type": "image_url", "image_url": {"url": u}} for u in ex.images
    ]
    validate_entry({"role": "user", "content": content})


@pytest.mark.parametrize("order", [("X", "Y"), ("Y", "X")])
def test_figures_follow_draw_order_on_a_page(tmp_path, order):
    """On one page, figures come in the order the page draws them, whatever their resource names."""
    data, figs = two_figures_pdf(tmp_path, *order)
    ex = extract_pdf_bytes(data, name="two.pdf")
    assert [_decode(u).size for u in ex.images] == [figs[k].size for k in order]
    assert ex.captions == (f"Figure 1: figure {order[0]}", f"Figure 2: figure {order[1]}")


def test_punctuated_captions_preferred_over_prose():
    """'Figure 2 shows …' prose is not a caption when punctuated captions cover the figures."""
    text = (
        "Figure 2 shows the rig from above.\nFigure 1: The rig\nFIG. 2 — Close-up\nFigure 3 extra"
    )
    assert _page_captions(text, 2) == ["Figure 1: The rig", "FIG. 2 — Close-up"]
    assert _page_captions(text, 3) == ["Figure 1: The rig", "FIG. 2 — Close-up", "Figure 3 extra"]
    assert _page_captions("图 3：训练流程\n正文", 1) == ["图 3：训练流程"]
    assert _page_captions("no captions here", 2) == []


def test_max_chars_cuts_body_but_keeps_figures_section(figures):
    """With a small cap the body is cut and the full ## Figures section survives."""
    data, _, full = figures
    ex = extract_pdf_bytes(data, name="report.pdf", max_chars=300)
    section = figures_section(EXPECTED_CAPTIONS)
    assert ex.truncated is True
    assert len(ex.text) == 300
    assert ex.text.endswith(section)
    assert ex.text.startswith("[Page 1]")
    assert len(full.text) > 300


def test_max_figures_limits_images(tmp_path):
    """At most max_figures figures are kept, with matching captions."""
    data = many_figures_pdf(tmp_path, 5)
    ex = extract_pdf_bytes(data, name="m.pdf", max_figures=3)
    assert len(ex.images) == 3
    assert ex.captions == ("Figure 1: panel 1", "Figure 2: panel 2", "Figure 3: panel 3")


def test_text_only_pdf_has_no_figures_section():
    """A PDF without images has no ## Figures tail and no captions."""
    data = text_pdf(["Alpha page\nsecond line", "Beta page"], title="Two pages")
    ex = extract_pdf_bytes(data, name="two.pdf")
    assert ex.text == "[Page 1]\nAlpha page\nsecond line\n\n[Page 2]\nBeta page"
    assert ex.images == () and ex.captions == ()
    assert ex.title == "Two pages"


def test_placeholder_metadata_title_falls_back_to_name():
    """reportlab's default 'untitled' metadata title is ignored in favour of the given title."""
    ex = extract_pdf_bytes(text_pdf(["x"]), name="notes.pdf", title="notes.pdf")
    assert ex.title == "notes.pdf"


def test_password_protected_pdf_raises():
    """A PDF that needs a user password raises AttachError with a hint."""
    writer = PdfWriter(clone_from=io.BytesIO(text_pdf(["secret page"])))
    writer.encrypt(user_password="hunter2", owner_password="owner")
    buf = io.BytesIO()
    writer.write(buf)
    with pytest.raises(AttachError, match="password-protected") as err:
        extract_pdf_bytes(buf.getvalue(), name="locked.pdf")
    assert err.value.hint


def test_owner_only_encryption_is_readable():
    """A PDF encrypted with an empty user password (restrictions only) still extracts."""
    writer = PdfWriter(clone_from=io.BytesIO(text_pdf(["readable page"])))
    writer.encrypt(user_password="", owner_password="owner")
    buf = io.BytesIO()
    writer.write(buf)
    assert PdfReader(io.BytesIO(buf.getvalue())).is_encrypted
    ex = extract_pdf_bytes(buf.getvalue(), name="restricted.pdf")
    assert "readable page" in ex.text


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_truncated_pdf_raises(figures, fraction):
    """A PDF cut short raises AttachError instead of returning garbage."""
    data = figures[0]
    with pytest.raises(AttachError, match="not a readable PDF") as err:
        extract_pdf_bytes(data[: int(len(data) * fraction)], name="cut.pdf")
    assert "truncated" in err.value.hint


def test_non_pdf_bytes_raise():
    """Bytes without a %PDF header are refused."""
    with pytest.raises(AttachError, match="not a PDF"):
        extract_pdf_bytes(b"<html>hello</html>", name="page.pdf")


def test_real_world_pdf_fixture(fixtures_dir, tmp_path):
    """A pdfTeX-made spec from a Debian doc package: 17 pages, text, no figures, title = file name."""
    path = tmp_path / "spec.pdf"
    shutil.copy(fixtures_dir / "real_shared-mime-info-spec.pdf", path)
    ex = extract_file(path)
    assert ex.kind == "pdf" and ex.url == path.resolve().as_uri()
    assert re.findall(r"^\[Page (\d+)\]$", ex.text, re.M) == [str(n) for n in range(1, 18)]
    assert "Shared MIME-info Database" in ex.text
    assert "This is version 0.21 of the Shared MIME-info Database specification" in ex.text
    assert "## Figures" not in ex.text and ex.images == ()
    assert ex.title == "spec.pdf"


def test_real_world_pdf_truncated_raises(fixtures_dir):
    """The real-world PDF cut in half is refused as unreadable."""
    data = (fixtures_dir / "real_shared-mime-info-spec.pdf").read_bytes()
    with pytest.raises(AttachError):
        extract_pdf_bytes(data[: len(data) // 2], name="half.pdf")


def test_pdf_extension_with_other_bytes_raises(tmp_path):
    """A .pdf file that holds no PDF raises AttachError."""
    path = tmp_path / "fake.pdf"
    path.write_text("just some text pretending to be a PDF")
    with pytest.raises(AttachError, match="not a PDF"):
        extract_file(path)
