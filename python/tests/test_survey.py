"""The survey of the whole corpus: one process, a 2-worker Dask LocalCluster and `bspkit survey`
give the same table."""
import json

import pytest

import bspkit
import bspkit.survey
from conftest import ALL, CORPUS, REFUSED, SUPPORTED, corpus_path, expected_format, run_cli


@pytest.fixture(scope="module")
def single():
    for p in ALL:
        corpus_path(p)  # every manifest file is there
    return bspkit.survey.run_lines(CORPUS)


def test_single_process_table_covers_the_corpus(single):
    rows = [json.loads(line) for line in single]
    by_file = {r["file"]: r for r in rows}
    for relpath in ALL:
        r = by_file[str(CORPUS / relpath)]
        assert r["size"] == (CORPUS / relpath).stat().st_size
        if relpath in REFUSED:
            assert r["error"] and r["format"] is None
            continue
        assert r["error"] is None, r["error"]
        assert r["format"] == expected_format(relpath)
        bsp = bspkit.open(CORPUS / relpath)
        findings = bsp.check()
        assert r["errors"] == sum(f["severity"] == "error" for f in findings)
        assert r["warnings"] == sum(f["severity"] == "warning" for f in findings)
        assert sum(g["count"] for g in r["findings"]) == len(findings)
        assert r["entities"] == len(bsp.entities)
        classes = {}
        for e in bsp.entities:
            classes[e.get("classname", "")] = classes.get(e.get("classname", ""), 0) + 1
        assert r["entity_classes"] == classes
        m = bsp.model(lightmaps=False, textures=False)
        assert r["textures"] == sorted({mat["name"] for mat in m.materials})
        assert r["triangles"] == len(m.indices)
        import numpy as np

        firsts, counts = m.surface_first_vertex, m.surface_vertex_count
        mask = np.zeros(len(m.positions), bool)
        for f, c, mo in zip(firsts, counts, m.surface_model):
            if mo == 0:
                mask[f:f + c] = True
        if mask.any():
            # Printed as each float32's shortest text: equal once read back as float32.
            assert np.array_equal(np.array(r["mins"]).astype(np.float32), m.positions[mask].min(axis=0))
            assert np.array_equal(np.array(r["maxs"]).astype(np.float32), m.positions[mask].max(axis=0))
        for name, lump in bsp.lumps.items():
            if name in r["lump_records"]:
                assert r["lump_records"][name] == lump.count
        assert bspkit.survey_one(CORPUS / relpath) == r


def test_cli_survey_writes_the_same_table(single, tmp_path):
    out = tmp_path / "survey.jsonl"
    run_cli("survey", CORPUS, "-o", out)
    assert out.read_text(encoding="utf-8").splitlines() == single
    # two threads or one: the same bytes
    out1 = tmp_path / "one.jsonl"
    run_cli("survey", CORPUS, "-o", out1, "--threads", "1")
    assert out1.read_bytes() == out.read_bytes()


def test_dask_local_cluster_table_equals_single_process(single, tmp_path):
    import distributed

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        with distributed.Client(cluster) as client:
            lines = bspkit.survey.run_lines(CORPUS, client=client)
            batched = bspkit.survey.run_lines(CORPUS, client=client, batch=8)
    finally:
        cluster.close()
    assert lines == single
    assert batched == single
    # the table a user loads into pandas
    bspkit.survey.write(lines, tmp_path / "t.jsonl")
    bspkit.survey.write(lines, tmp_path / "t.csv")
    import pandas as pd

    frame = pd.read_json(tmp_path / "t.jsonl", lines=True)
    assert len(frame) == len(ALL)
    assert set(frame.loc[frame["error"].isna(), "format"]) == {expected_format(p) for p in SUPPORTED}
    csv = pd.read_csv(tmp_path / "t.csv")
    assert list(csv["file"]) == list(frame["file"])
    assert [json.loads(t) for t in csv["textures"]] == list(frame["textures"])


def test_survey_rows_for_unreadable_files(tmp_path):
    (tmp_path / "bad.bsp").write_bytes(b"not a map at all")
    (tmp_path / "dir.bsp").mkdir()
    (tmp_path / "dir.bsp" / "inner.BSP").write_bytes(b"")
    lines = bspkit.survey.run_lines(tmp_path)
    rows = [json.loads(line) for line in lines]
    assert [r["file"] for r in rows] == [str(tmp_path / "bad.bsp"), str(tmp_path / "dir.bsp" / "inner.BSP")]
    assert all(r["error"] for r in rows)
    out = tmp_path / "cli.jsonl"
    run_cli("survey", tmp_path, "-o", out)
    assert out.read_text().splitlines() == lines
