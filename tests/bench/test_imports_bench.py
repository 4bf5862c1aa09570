"""The per-format import bench (``python -m bench.imports``) at a tiny size: every format's
file, made from its producer's sample, imports the messages asked for, and the table prints.
Timings are reported by the bench, never asserted here."""

from __future__ import annotations

from bench import imports


def test_every_format_file_made_from_its_sample_imports_what_was_asked(capsys) -> None:
    result = imports.run([60], list(imports.SAMPLES))
    assert [r["format"] for r in result["results"]] == list(imports.SAMPLES)
    for res in result["results"]:
        got = res["sizes"][60]
        assert got["messages"] >= 60, res["format"]  # the sample repeated until it holds them
        assert got["chatkeep"][2] > 0 and got["parse"][0] > 0
    imports.print_rows(result["rows"])
    out = capsys.readouterr().out
    assert all(f"{fmt} " in out for fmt in imports.SAMPLES)


def test_growth_line_compares_time_per_message_of_two_sizes() -> None:
    result = imports.run([300, 900], ["jsonl"])  # the sample holds 200: 2 copies, then 5
    (res,) = result["results"]
    assert (res["sizes"][300]["messages"], res["sizes"][900]["messages"]) == (400, 1000)
    assert any(r[0].strip().startswith("growth per message, jsonl") for r in result["rows"])
