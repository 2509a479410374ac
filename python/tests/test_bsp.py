"""Opening, lumps, entities, saving, check findings and bad input, over every corpus map."""
import os
import shutil

import numpy as np
import pytest

import bspkit
from conftest import ALL, REFUSED, SUPPORTED, cli_json, corpus_path, expected_format, run_cli


@pytest.mark.parametrize("relpath", SUPPORTED)
def test_open_and_lumps_equal_the_file(relpath):
    path = corpus_path(relpath)
    raw = path.read_bytes()
    bsp = bspkit.open(path)
    assert bsp.format == expected_format(relpath)
    info = cli_json("info", path)
    assert bsp.version == info.get("version")
    assert len(bsp.lumps) == len(info["lumps"])
    assert bytes(bsp.data()) == raw
    for lump in bsp.lumps.values():
        stored = lump.stored()
        assert stored.readonly
        assert bytes(stored) == raw[lump.offset:lump.offset + lump.length] if lump.length > 0 else len(stored) == 0
        data = lump.data()
        assert data.readonly
        # Source's game lump is decoded with its directory's offsets made absolute (console maps
        # store them relative), so only the other lumps are their stored bytes
        if not lump.compressed and lump.name != "game_lump":
            assert bytes(data) == bytes(stored)
    # bytes in memory open the same way
    again = bspkit.open(raw, name=relpath)
    assert [l.length for l in again.lumps.values()] == [l.length for l in bsp.lumps.values()]


def test_memoryview_keeps_the_map_alive():
    path = corpus_path("q2_v38/q2_base1.bsp")
    raw = path.read_bytes()
    bsp = bspkit.open(path)
    planes = bsp.lumps["planes"]
    view = planes.data()
    expect = raw[planes.offset:planes.offset + planes.length]
    del bsp, planes
    import gc

    gc.collect()
    assert bytes(view) == expect
    with pytest.raises(TypeError):
        view[0] = 1  # read-only


@pytest.mark.parametrize("relpath", SUPPORTED)
def test_entity_edit_round_trips_through_save(relpath, tmp_path):
    path = corpus_path(relpath)
    bsp = bspkit.open(path)
    # unchanged: the file is saved byte for byte
    bsp.entities  # parsed, not edited
    bsp.save(tmp_path / "same.bsp")
    assert (tmp_path / "same.bsp").read_bytes() == path.read_bytes()
    ents = bsp.entities
    before = [list(map(list, e.pairs)) for e in ents]
    assert ents[0]["classname"] == "worldspawn"
    ents[0]["message"] = "edited from Python \u00e9"
    ents[0].add("_dup", "1")
    ents[0].add("_dup", "2")
    ents.append(bspkit.Entity([("classname", "info_null"), ("origin", "1 2 3")]))
    bsp.save(tmp_path / "edited.bsp")
    back = bspkit.open(tmp_path / "edited.bsp")
    got = [e.pairs for e in back.entities]
    assert got == [e.pairs for e in ents]
    assert got[0] != before[0]
    assert back.entities[0].get_all("_dup") == ["1", "2"]
    assert back.props == bsp.props
    # the CLI reads the same entities
    cli = cli_json("entities", tmp_path / "edited.bsp")
    assert [e["pairs"] for e in cli] == got
    # every other lump kept its decoded bytes (the game lump's directory holds absolute file
    # offsets, which move with the entity lump: its props are compared instead)
    for name, lump in bsp.lumps.items():
        if name not in ("entities", "game_lump"):
            assert bytes(back.lumps[name].data()) == bytes(lump.data()), name


@pytest.mark.parametrize("relpath", SUPPORTED)
def test_check_equals_the_cli(relpath):
    path = corpus_path(relpath)
    findings = bspkit.open(path).check()
    cli = cli_json("check", path, check=False)
    assert findings == cli["findings"]


@pytest.mark.parametrize("relpath", REFUSED)
def test_refused_variants_raise_bsperror(relpath):
    path = corpus_path(relpath)
    with pytest.raises(bspkit.BspError) as e:
        bspkit.open(path)
    assert e.value.file == str(path)
    assert e.value.lump == "header"
    r = run_cli("info", path, check=False)
    assert r.returncode == 1 and r.stderr.strip() == str(e.value)


def test_bad_input_raises_bsperror(tmp_path):
    with pytest.raises(bspkit.BspError) as e:
        bspkit.open(tmp_path)
    assert e.value.file == str(tmp_path) and "directory" in str(e.value)
    rnd = tmp_path / "random.bsp"
    rnd.write_bytes(np.random.default_rng(13).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    with pytest.raises(bspkit.BspError) as e:
        bspkit.open(rnd)
    assert e.value.lump == "header" and e.value.offset == 0
    with pytest.raises(bspkit.BspError):
        bspkit.open(b"VBSP")
    with pytest.raises(bspkit.BspError):
        bspkit.open(tmp_path / "missing.bsp")


@pytest.mark.parametrize("relpath", ["q2_v38/q2_base1.bsp", "src_v20/sdk2013_boxinaroom.bsp", "q3_v46/oa_ctf2.bsp",
                                     "hl1_v30/hl_undertow.bsp"])
def test_truncated_maps_raise_or_read_never_crash(relpath, tmp_path):
    raw = corpus_path(relpath).read_bytes()
    short = tmp_path / "short.bsp"
    short.write_bytes(raw[:20])
    with pytest.raises(bspkit.BspError) as e:
        bspkit.open(short)
    assert e.value.file == str(short)
    half = tmp_path / "half.bsp"
    half.write_bytes(raw[:len(raw) // 2])
    bsp = bspkit.open(half)  # lumps past the end are warnings...
    assert any("end of the file" in d["message"] or "past" in d["message"] for d in bsp.diagnostics())
    # ...and whatever goes on either works or raises BspError with a location
    cli = run_cli("check", half, "--json", check=False)
    assert bsp.check() == __import__("json").loads(cli.stdout)["findings"]
    for work in (lambda: bsp.model(), lambda: bsp.entities, lambda: bsp.trace([[0, 0, 0]], [[0, 0, -100]])):
        try:
            work()
        except bspkit.BspError as err:
            assert err.file == str(half)


def test_source_pakfile_add_read_remove(tmp_path):
    path = corpus_path("src_v21/l4d2_escapefromterrortown01.bsp")
    bsp = bspkit.open(path)
    cli = cli_json("pak", "list", path)
    assert [e["name"] for e in bsp.pak.list()] == [e["name"] for e in cli["entries"]]
    first = bsp.pak.list()[0]["name"]
    assert len(bsp.pak.read(first)) == bsp.pak.list()[0]["size"]
    bsp.pak.add("scripts/from_python.txt", b"hello from python")
    removed = bsp.pak.remove("*.vmt")
    assert removed > 0
    bsp.save(tmp_path / "pak.bsp")
    back = bspkit.open(tmp_path / "pak.bsp")
    names = back.pak.names()
    assert back.pak.read("scripts/from_python.txt") == b"hello from python"
    assert not any(n.lower().endswith(".vmt") for n in names)
    assert len(names) == len(cli["entries"]) - removed + 1
    with pytest.raises(ValueError):
        bsp.pak.add("../escape.txt", b"x")
    with pytest.raises(bspkit.BspError):
        bspkit.open(corpus_path("q2_v38/q2_base1.bsp")).pak.list()


@pytest.mark.parametrize("relpath", [p for p in SUPPORTED if expected_format(p) == "source"])
def test_props_equal_the_cli(relpath):
    path = corpus_path(relpath)
    props = bspkit.open(path).props
    cli = cli_json("props", path, check=False)
    cli_props = cli.get("props") or []
    assert len(props or []) == len(cli_props)
    for p, c in zip(props or [], cli_props):
        assert p["model"] == c["model"] and list(p["origin"]) == pytest.approx(c["origin"])


@pytest.mark.parametrize("relpath", SUPPORTED)
def test_vis_rows_equal_the_cli(relpath):
    path = corpus_path(relpath)
    bsp = bspkit.open(path)
    try:
        vis = bsp.vis
    except bspkit.BspError:
        assert run_cli("vis", path, check=False).returncode == 1
        return
    if vis.clusters == 0:
        return
    for c in sorted({0, vis.clusters // 2, vis.clusters - 1}):
        cli = cli_json("vis", path, "--cluster", c)
        pvs, pas = vis.pvs(c), vis.pas(c)
        assert pvs.dtype == np.bool_ and len(pvs) == vis.clusters
        assert list(np.flatnonzero(pvs)) == cli["visible"]
        assert list(np.flatnonzero(pas)) == cli["audible"]


def test_entities_assigned_as_dicts_save_and_reopen(tmp_path):
    bsp = bspkit.open(corpus_path("q1_v29/q1_mp_lobby.bsp"))
    world = dict(bsp.entities[0])
    bsp.entities = [world, {"classname": "info_player_start", "origin": "0 0 24"}]
    bsp.save(tmp_path / "two.bsp", compress=False)
    back = bspkit.open(tmp_path / "two.bsp")
    assert [dict(e) for e in back.entities] == [world, {"classname": "info_player_start", "origin": "0 0 24"}]
    assert back.tobytes() == (tmp_path / "two.bsp").read_bytes()
    assert [f for f in back.check() if f["lump"] == "entities" and f["severity"] == "error"] == []


def test_source_compress_round_trip(tmp_path):
    path = corpus_path("src_v20/sdk2013_boxinaroom.bsp")
    bsp = bspkit.open(path)
    bsp.save(tmp_path / "lzma.bsp", compress=True)
    packed = bspkit.open(tmp_path / "lzma.bsp")
    assert any(l.compressed for l in packed.lumps.values())
    for name, lump in bsp.lumps.items():
        if name not in ("game_lump", "pakfile"):
            assert bytes(packed.lumps[name].data()) == bytes(lump.data()), name


def test_open_from_buffers():
    raw = corpus_path("q2_v38/q2_mp_lobby.bsp").read_bytes()
    doubled = np.repeat(np.frombuffer(raw, dtype=np.uint8), 2)
    for source in (bytearray(raw), memoryview(raw), np.frombuffer(raw, dtype=np.uint8), memoryview(doubled)[::2]):
        bsp = bspkit.open(source, name="mem.bsp")
        assert bsp.format == "quake2" and bytes(bsp.data()) == raw
    with pytest.raises(TypeError):
        bspkit.open(12345)
