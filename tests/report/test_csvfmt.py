"""The CSV export: columns as documented, a lossless round trip, errors that say where."""

import csv
import io

import pytest

from msgbench.views.formats import csvfmt


def rows_of(text):
    return list(csv.reader(io.StringIO(text)))


def test_columns_in_the_documented_order_then_metrics_and_verify_sorted(one_run):
    header = rows_of(csvfmt.render(one_run))[0]
    assert header[:13] == list(csvfmt.COLUMNS)
    metrics = [h for h in header if h.startswith("metric:")]
    verify = [h for h in header if h.startswith("verify:")]
    assert metrics == sorted(metrics) and "metric:hops_per_s" in metrics
    assert verify == sorted(verify) and "verify:hops" in verify
    assert header == [*csvfmt.COLUMNS, csvfmt.BUILD, *metrics, *verify]


def test_one_row_per_measurement_warmups_flagged(one_run):
    rows = rows_of(csvfmt.render(one_run))[1:]
    measurements = one_run["runs"][0]["measurements"]
    assert len(rows) == len(measurements)
    warmup = csvfmt.COLUMNS.index("warmup")
    assert sum(row[warmup] == "true" for row in rows) == sum(m["warmup"] for m in measurements)


def test_round_trip_keeps_every_measurement(two_runs):
    back = csvfmt.parse(csvfmt.render(two_runs))
    assert [r["id"] for r in back["runs"]] == [r["id"] for r in two_runs["runs"]]
    keys = ("scenario", "workload", "target", "variant", "variant_label", "params", "sweep", "x",
            "repetition", "warmup", "status", "error", "metrics", "verify")
    for original, parsed in zip(two_runs["runs"], back["runs"], strict=True):
        for m, p in zip(original["measurements"], parsed["measurements"], strict=True):
            assert {k: p[k] for k in keys} == {k: m[k] for k in keys}


def test_parse_computes_the_summaries(one_run):
    back = csvfmt.parse(csvfmt.render(one_run))
    original = {(s["scenario"], s["target"], str(s["params"])): s
                for s in one_run["runs"][0]["summary"]}
    parsed = back["runs"][0]["summary"]
    assert len(parsed) == len(original)
    for s in parsed:
        o = original[(s["scenario"], s["target"], str(s["params"]))]
        assert s["status"] == o["status"]
        for name, stats in o["metrics"].items():
            assert s["metrics"][name]["median"] == pytest.approx(stats["median"])


def test_parse_takes_another_summariser():
    text = csvfmt.render({"runs": [{"id": "r", "measurements": []}]})
    text += "r,s,w,t,v,idiomatic,,,1,false,ok,,{},\n"  # the build column empty
    doc = csvfmt.parse(text, summarize=lambda ms: [{"count": len(ms)}])
    assert doc["runs"][0]["summary"] == [{"count": 1}]


HEADER = ",".join(csvfmt.COLUMNS) + ",metric:a_ms"
ROW = "\nr,s,w,t,v,idiomatic,,"  # the row's first seven fields


@pytest.mark.parametrize(("text", "line", "column", "expected"), [
    ("", 1, 1, "the CSV is empty"),
    ("run_id,scenario,target\n", 1, 3, "expected column 'workload' (found 'target')"),
    ("run_id,scenario\n", 1, 3, "the header ends there"),
    (HEADER + ",speed\n", 1, 15, "expected a column named metric:<name>"),
    (HEADER + "\n", 2, 1, "at least one measurement row"),
    (HEADER + ROW + ",1,false,ok,,{}\n", 2, 14, "expected 14 fields"),
    (HEADER + ROW + ',1,false,ok,,"{""n"":",1\n', 2, 13, "params: expected a JSON"),
    (HEADER + ROW + ",1,false,ok,,[],1\n", 2, 13, "params: expected a JSON object"),
    (HEADER + ROW + ",1,false,ok,,{},fast\n", 2, 14,
     "metric:a_ms: expected a number, found 'fast'"),
    (HEADER + ROW + ",1,maybe,ok,,{},1\n", 2, 10, "warmup: expected true or false"),
    (HEADER + "\nr,s,,t,v,idiomatic,,,1,false,ok,,{},1\n", 2, 3, "workload: expected a value"),
    (HEADER + ROW + "x1,1,false,ok,,{},1\n", 2, 8, "x: expected a number"),
    (HEADER + ROW + ",1,false,ok,,{},inf\n", 2, 14, "expected a finite number"),
])
def test_parse_errors_say_the_line_and_column(text, line, column, expected):
    with pytest.raises(csvfmt.ParseError) as caught:
        csvfmt.parse(text)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert expected in str(caught.value)


def test_a_csv_from_before_builds_has_no_build_column_and_still_reads():
    text = ",".join(csvfmt.COLUMNS) + ",metric:hops_per_s\nr,s,ring,t,v,idiomatic,,,1,false,ok,,{},5\n"
    (run,) = csvfmt.parse(text)["runs"]
    assert run["measurements"][0]["build"] == "" and run["measurements"][0]["metrics"] == {"hops_per_s": 5}
