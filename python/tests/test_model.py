"""Model arrays against the command line's export, and traces against `bspkit trace --rays`."""
import json
from pathlib import Path

import numpy as np
import pytest

import bspkit
from conftest import SUPPORTED, corpus_path, run_cli

SKIPPED = bspkit.Model.MATERIAL_FLAGS["nodraw"] | bspkit.Model.MATERIAL_FLAGS["trigger"] | \
    bspkit.Model.MATERIAL_FLAGS["clip"]


def obj_area(path):
    """Total triangle area of an OBJ file, read independently of bspkit (v and f lines)."""
    verts, faces = [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("v "):
                verts.append([float(x) for x in line.split()[1:4]])
            elif line.startswith("f "):
                faces.append([int(t.split("/")[0]) - 1 for t in line.split()[1:4]])
    if not faces:
        return 0.0, 0
    v = np.array(verts, dtype=np.float64)
    i = np.array(faces)
    area = 0.5 * np.linalg.norm(np.cross(v[i[:, 1]] - v[i[:, 0]], v[i[:, 2]] - v[i[:, 0]]), axis=1)
    return float(area.sum()), len(faces)


@pytest.mark.parametrize("relpath", SUPPORTED)
def test_arrays_equal_the_exported_counts_and_area(relpath, tmp_path):
    path = corpus_path(relpath)
    bsp = bspkit.open(path)
    m = bsp.model(lightmaps=False, textures=False)
    # shapes, dtypes, zero-copy views of the model (base: the C++ object)
    nv, nt = len(m.positions), len(m.indices)
    assert m.positions.shape == (nv, 3) and m.positions.dtype == np.float32
    assert m.normals.shape == (nv, 3) and m.uv.shape == (nv, 2) and m.lightmap_uv.shape == (nv, 2)
    assert m.colors.shape == (nv, 4) and m.colors.dtype == np.uint8
    assert m.indices.shape == (nt, 3) and m.indices.dtype == np.uint32
    assert m.positions.base is not None and not m.positions.flags.owndata
    assert nt == 0 or int(m.indices.max()) < nv
    assert int(m.surface_triangle_count.sum()) == nt
    assert len(m.triangle_surface) == nt
    # what the exporter keeps: no nodraw / trigger / clip surfaces
    flags = np.array([mat["flags"] for mat in m.materials], dtype=np.uint32)
    keep = (flags[m.triangle_material] & SKIPPED) == 0 if nt else np.zeros(0, bool)
    out = tmp_path / "map.obj"
    summary = json.loads(run_cli("export", path, "-o", out, "--json", "--lighting", "none", "--no-textures").stdout)
    assert int(keep.sum()) == summary["triangles"]
    area, faces = obj_area(out)
    assert faces == summary["triangles"]
    assert float(m.triangle_areas()[keep].sum()) == pytest.approx(area, rel=1e-6, abs=1e-3)


def test_lightmaps_and_textures_are_rgba_pages():
    bsp = bspkit.open(corpus_path("q1_v29/q1_mp_lobby.bsp"))
    m = bsp.model()
    assert m.lightmaps, "a lit Quake map has lightmap pages"
    style, page = m.lightmaps[0]
    assert style == 0 and page.ndim == 3 and page.shape[2] == 4 and page.dtype == np.uint8
    assert (page[..., 3] == 255).all()
    assert m.textures and all(t.shape[2] == 4 for _, t in m.textures)
    names = {mat["name"] for mat in m.materials}
    assert {n for n, _ in m.textures} <= names | {n.lower() for n in names}


def sample_rays(m, n, seed):
    rng = np.random.default_rng(seed)
    p = m.positions
    lo, hi = p.min(axis=0) - 16, p.max(axis=0) + 16
    starts = rng.uniform(lo, hi, (n, 3)).astype(np.float32)
    ends = rng.uniform(lo, hi, (n, 3)).astype(np.float32)
    return starts, ends


def cli_traces(path, starts, ends, tmp_path, *extra):
    rays = tmp_path / "rays.txt"
    rays.write_text("".join(
        f"{a[0]!r},{a[1]!r},{a[2]!r} {b[0]!r},{b[1]!r},{b[2]!r}\n"
        for a, b in zip(starts.astype(float).tolist(), ends.astype(float).tolist())))
    r = run_cli("trace", path, "--rays", rays, *extra, check=False)
    return r, [json.loads(line) for line in r.stdout.splitlines()]


def f32(value):
    """A number of the CLI's JSON, which prints the shortest text that reads
    back as the same float32 (not the float's exact value as a double)."""
    return np.asarray(value, dtype=np.float64).astype(np.float32)


def assert_same(rows, cli):
    assert len(rows) == len(cli)
    for row, c in zip(rows, cli):
        assert row["fraction"] == f32(c["fraction"])
        assert np.array_equal(row["end"], f32(c["end"]))
        assert bool(row["hit"]) == c["hit"]
        assert bool(row["startsolid"]) == c["startsolid"] and bool(row["allsolid"]) == c["allsolid"]
        if c["fraction"] < 1:
            assert np.array_equal(row["normal"], f32(c["normal"]))
            assert int(row["model"]) == c["model"]
            assert int(row["contents"]) == c["contents"]["raw"]
            assert int(row["surface_flags"]) == c["surface_flags"]
            assert (int(row["brush"]) if row["brush"] >= 0 else None) == c["brush"]
            assert bool(row["triangle"]) == c["triangle"]


@pytest.mark.parametrize("relpath", SUPPORTED)
def test_traces_equal_the_cli(relpath, tmp_path):
    path = corpus_path(relpath)
    bsp = bspkit.open(path)
    try:
        m = bsp.model(lightmaps=False, textures=False)
    except bspkit.BspError:
        pytest.fail("every supported corpus map builds")
    if len(m.positions) == 0:
        return
    starts, ends = sample_rays(m, 200, 13)
    for extra, kwargs in (((), {}), (("--box", "-16,-16,-24,16,16,32", "--models"),
                                     {"mins": (-16, -16, -24), "maxs": (16, 16, 32), "models": True})):
        r, cli = cli_traces(path, starts, ends, tmp_path, *extra)
        if r.returncode != 0:  # e.g. a Quake map without clip hulls traced with a box
            with pytest.raises(bspkit.BspError) as e:
                bsp.trace(starts, ends, **kwargs)
            assert str(e.value) == r.stderr.strip().splitlines()[-1]
            continue
        rows = bsp.trace(starts, ends, **kwargs)
        assert rows.shape == (len(starts),)
        assert_same(rows, cli)
        # one thread gives the same rows as every core
        assert (bsp.trace(starts, ends, threads=1, **kwargs) == rows).all()


def test_trace_names_the_ray_that_cannot_be_traced():
    """One ray with coordinates too large for the map's distances: the call raises naming it."""
    bsp = bspkit.open(corpus_path("hl1_v30/cs16_de_torabora.bsp"))
    starts = np.tile(np.array([[0.0, 0.0, 0.0]], dtype=np.float32), (600, 1))
    ends = starts + np.float32([0, 0, -2048])
    starts[300] = (-3e38, 3e38, 3e38)
    with pytest.raises(bspkit.BspError) as e:
        bsp.trace(starts, ends)
    assert "ray 300: " in str(e.value) and "coordinates are too large" in str(e.value)
    assert "(1 of 600 rays could not be traced)" in str(e.value)
    assert e.value.lump == "nodes"
    starts[300] = (0, 0, 0)
    assert bsp.trace(starts, ends)["fraction"].shape == (600,)


def test_trace_rejects_bad_shapes():
    bsp = bspkit.open(corpus_path("q2_v38/q2_base1.bsp"))
    with pytest.raises(ValueError):
        bsp.trace(np.zeros((3, 3)), np.zeros((2, 3)))
    with pytest.raises(ValueError):
        bsp.trace(np.zeros((1, 3)), np.zeros((1, 3)), mins=(1, 1, 1), maxs=(0, 0, 0))


def test_export_from_python_equals_the_cli(tmp_path):
    path = corpus_path("q2_v38/q2_base1.bsp")
    got = bspkit.open(path).export(tmp_path / "py.glb")
    cli = json.loads(run_cli("export", path, "-o", tmp_path / "cli.glb", "--json").stdout)
    assert got["triangles"] == cli["triangles"] and got["materials"] == cli["materials"]
    assert (tmp_path / "py.glb").read_bytes() == (tmp_path / "cli.glb").read_bytes()


def test_threads_share_a_map():
    """trace / model / check release the GIL: Python threads on one map give the single-thread answers."""
    from concurrent.futures import ThreadPoolExecutor

    bsp = bspkit.open(corpus_path("src_v20/tf2_test_displacement_decompile.bsp"))
    m = bsp.model(lightmaps=False, textures=False)
    starts, ends = sample_rays(m, 500, 7)
    expect = bsp.trace(starts, ends, threads=1)
    findings = bsp.check()
    with ThreadPoolExecutor(4) as pool:
        traces = list(pool.map(lambda _: bsp.trace(starts, ends), range(8)))
        checks = list(pool.map(lambda _: bsp.check(), range(4)))
        models = list(pool.map(lambda _: len(bsp.model(lightmaps=False).indices), range(4)))
    assert all((t == expect).all() for t in traces)
    assert all(c == findings for c in checks)
    assert models == [len(m.indices)] * 4


def test_model_arrays_outlive_the_map():
    bsp = bspkit.open(corpus_path("q1_v29/q1_mp_lobby.bsp"))
    m = bsp.model()
    positions, page = m.positions, m.lightmaps[0][1]
    expect = positions.copy(), page.copy()
    del bsp, m
    import gc

    gc.collect()
    assert (positions == expect[0]).all() and (page == expect[1]).all()


def open_with_points_inside(path, count, seed):
    """The map, and `count` random points (as float32 values, lists) inside its mesh's bounds."""
    bsp = bspkit.open(path)
    m = bsp.model(lightmaps=False, textures=False)
    rng = np.random.default_rng(seed)
    lo, hi = m.positions.min(axis=0), m.positions.max(axis=0)
    return bsp, rng.uniform(lo, hi, (count, 3)).astype(np.float32).astype(float).tolist()


@pytest.mark.parametrize("relpath", ["q1_v29/q1_mp_lobby.bsp", "q2_v38/q2_base1.bsp", "q3_v46/oa_ctf2.bsp",
                                     "src_v20/tf2_mp_lobby.bsp", "hl1_v30/hl_undertow.bsp"])
def test_leaf_at_equals_the_cli(relpath):
    path = corpus_path(relpath)
    bsp, points = open_with_points_inside(path, 5, 5)
    for p in points:
        got = bsp.leaf_at(p)
        cli = json.loads(run_cli("leaf", path, *[repr(x) for x in p], "--json").stdout)
        assert got["leaf"] == cli["leaf"] and got["cluster"] == cli["cluster"] and got["area"] == cli["area"]
        assert got["contents"] == cli["contents"]["raw"] and got["content_flags"] == cli["contents"]["flags"]


@pytest.mark.parametrize("relpath", ["q1_v29/hl_crossfire_bsp29.bsp", "q2_v38/q2_base1.bsp", "q3_v46/oa_ctf2.bsp",
                                     "src_v20/sdk2013_boxinaroom.bsp"])
def test_visible_equals_the_cli(relpath):
    """Bsp.visible(a, b) against `bspkit visible --json`, and its parts against leaf_at and trace."""
    path = corpus_path(relpath)
    bsp, pts = open_with_points_inside(path, 12, 9)
    seen = set()
    for a, b in zip(pts[0::2], pts[1::2]):
        got = bsp.visible(a, b)
        cli = json.loads(run_cli("visible", path, "--from", ",".join(map(repr, a)), "--to", ",".join(map(repr, b)),
                                 "--json").stdout)
        for key in ("pvs", "line_of_sight", "visible"):
            assert got[key] == cli[key], key
        assert got["visible"] == (got["pvs"] and got["line_of_sight"])
        for end, point in (("from", a), ("to", b)):
            assert got[end]["leaf"] == cli[end]["leaf"] == bsp.leaf_at(point)["leaf"]
            assert got[end]["cluster"] == cli[end]["cluster"]
        assert np.float32(got["sight"]["fraction"]) == f32(cli["sight"]["fraction"])
        assert got["sight"]["inopen"] == cli["sight"]["inopen"] and got["sight"]["inwater"] == cli["sight"]["inwater"]
        assert got["vis_error"] is None and cli["vis_error"] is None
        seen.add((got["pvs"], got["line_of_sight"]))
    assert len(seen) >= 2  # the points give more than one kind of answer


def test_visible_says_when_the_vis_data_cannot_be_read(tmp_path):
    """q2_base1 with numclusters 2^31 - 1: the PVS is not used (pvs True), and vis_error says why, as the CLI."""
    import struct
    data = bytearray(Path(corpus_path("q2_v38/q2_base1.bsp")).read_bytes())
    offset = struct.unpack_from("<i", data, 8 + 8 * 3)[0]  # lump 3: visibility
    struct.pack_into("<i", data, offset, 0x7FFFFFFF)
    bad = tmp_path / "bad_vis.bsp"
    bad.write_bytes(bytes(data))
    got = bspkit.open(bad).visible((100, 100, 100), (120, 100, 100))
    cli = json.loads(run_cli("visible", bad, "--from", "100,100,100", "--to", "120,100,100", "--json").stdout)
    assert got["pvs"] is True and "numclusters" in got["vis_error"]
    assert got["vis_error"] == cli["vis_error"]


def read_png_rgba(path):
    """An 8-bit non-interlaced PNG of the CLI (RGBA, RGB or palette + tRNS) as a (h, w, 4) array:
    zlib and the five row filters, written out here so the test does not trust bspkit's own reader."""
    import struct
    import zlib
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, plte, trns = 8, b"", b"", b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and colour in (2, 3, 6)
        elif kind == b"PLTE":
            plte = body
        elif kind == b"tRNS":
            trns = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    bpp = {2: 3, 3: 1, 6: 4}[colour]
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + width * bpp)
    out = np.zeros((height, width * bpp), np.int32)
    for y in range(height):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        prev = out[y - 1] if y else np.zeros(width * bpp, np.int32)
        row = out[y]
        for x in range(width * bpp):
            a = row[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 0:
                p = 0
            elif f == 1:
                p = a
            elif f == 2:
                p = b
            elif f == 3:
                p = (a + b) // 2
            else:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            row[x] = (line[x] + p) & 0xFF
    if colour == 3:
        pal = np.frombuffer(plte, np.uint8).reshape(-1, 3)
        alpha = np.full(len(pal), 255, np.uint8)
        alpha[:len(trns)] = np.frombuffer(trns, np.uint8)
        idx = out.astype(np.intp)
        return np.dstack([pal[idx], alpha[idx]]).astype(np.uint8)
    if colour == 2:
        rgb = out.reshape(height, width, 3).astype(np.uint8)
        return np.dstack([rgb, np.full((height, width), 255, np.uint8)])
    return out.reshape(height, width, 4).astype(np.uint8)


@pytest.mark.parametrize("relpath", ["q1_v29/pd_change_dest.bsp", "hl1_v30/cs16_de_torabora.bsp",
                                     "q3_v46/oa_ctf2.bsp", "src_v20/sdk2013_boxinaroom.bsp"])
def test_render_equals_the_cli(relpath, tmp_path):
    path = corpus_path(relpath)
    bsp = bspkit.open(path)
    for view, flag in (("spawn", []), ("overview", ["--overview"])):
        image = bsp.render((96, 64), view=view)
        assert image.shape == (64, 96, 4) and image.dtype == np.uint8
        assert (image[..., :3].max(axis=2) > 0).mean() > 0.05, f"{relpath} {view}: the picture is empty"
        out = tmp_path / f"{view}.png"
        run_cli("render", path, "-o", out, "--size", "96x64", *flag)
        assert np.array_equal(image, read_png_rgba(out)), f"{relpath} {view}: differs from bspkit render"
    with pytest.raises(ValueError):
        bsp.render((0, 10))


@pytest.mark.parametrize("relpath", ["q1_v29/pd_change_dest.bsp", "q2_v38/q2_base1.bsp", "q3_v46/oa_ctf2.bsp",
                                     "src_v20/sdk2013_boxinaroom.bsp"])
def test_decompile_equals_the_cli(relpath, tmp_path):
    path = corpus_path(relpath)
    ext = ".vmf" if relpath.startswith("src_") else ".map"
    counts = bspkit.open(path).decompile(tmp_path / f"py{ext}")
    assert counts["brushes"] > 0
    cli = json.loads(run_cli("decompile", path, "-o", tmp_path / f"cli{ext}", "--json").stdout)
    assert (tmp_path / f"py{ext}").read_bytes() == (tmp_path / f"cli{ext}").read_bytes()
    for key in ("entities", "brushes", "sides"):
        assert counts[key] == cli[key], key
    with pytest.raises(ValueError):
        bspkit.open(path).decompile(tmp_path / "x.map", format="nonsense")


def write_tga_bottom_up(path, rgb, width, height):
    """An uncompressed 24-bit TGA with its origin at the bottom left, as q3map2 -external writes lm_NNNN.tga."""
    header = bytes([0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, width & 255, width >> 8, height & 255, height >> 8, 24, 0])
    pixels = np.frombuffer(rgb, dtype=np.uint8).reshape(height, width, 3)[::-1, :, ::-1]  # rows up, BGR
    path.write_bytes(header + pixels.tobytes())


def test_quake3_lightmaps_kept_outside_the_map_come_from_game_dirs(tmp_path):
    """q3map2 -external: the lightmaps lump is empty and the pages are maps/<map>/lm_NNNN.tga. The
    map's own 40 pages, written that way beside a copy whose lump length is 0, give back through
    game_dirs= the model, export and render of the map itself; without them the export says why."""
    path = corpus_path("q3_v46/oa_oacmpctf3.bsp")
    original = bspkit.open(path)
    pages = original.lumps["lightmaps"].data().tobytes()
    assert len(pages) == 40 * 128 * 128 * 3
    folder = tmp_path / "game" / "maps" / "ext_ctf3"
    folder.mkdir(parents=True)
    for p in range(40):
        write_tga_bottom_up(folder / f"lm_{p:04d}.tga", pages[p * 49152:(p + 1) * 49152], 128, 128)
    data = bytearray(path.read_bytes())
    data[8 + 8 * 14 + 4:8 + 8 * 14 + 8] = (0).to_bytes(4, "little")  # lump 14, lightmaps: length 0
    copy_path = tmp_path / "ext_ctf3.bsp"
    copy_path.write_bytes(bytes(data))
    copy = bspkit.open(copy_path)
    game = [tmp_path / "game"]

    want, got = original.model(textures=False), copy.model(textures=False, game_dirs=game)
    assert len(got.lightmaps) == len(want.lightmaps) > 0
    for (ws, wpage), (gs, gpage) in zip(want.lightmaps, got.lightmaps):
        assert ws == gs and np.array_equal(wpage, gpage)
    assert np.array_equal(got.lightmap_uv, want.lightmap_uv, equal_nan=True)
    assert got.diagnostics == [] and got.missing == []  # textures=False: only the pages were looked for
    textured = copy.model(game_dirs=game)
    assert len(textured.lightmaps) == len(want.lightmaps)
    assert textured.missing and {m["material"] for m in textured.missing} <= {m["name"] for m in textured.materials}
    unlit = copy.model()
    assert unlit.lightmaps == [] and any("lightmap" in d["message"] for d in unlit.diagnostics)

    # Export: the same bytes as the map's own; the CLI too, with --no-textures (the search still brings the pages).
    original.export(tmp_path / "want.glb", textures=False)
    summary = copy.export(tmp_path / "got.glb", textures=False, game_dirs=game)
    assert summary["lightmap_pages"] == 40 and summary["missing"] == [] and summary["warnings"] == []
    assert (tmp_path / "got.glb").read_bytes() == (tmp_path / "want.glb").read_bytes()
    run_cli("export", copy_path, "-o", tmp_path / "cli.glb", "--no-textures", "--game-dir", game[0])
    assert (tmp_path / "cli.glb").read_bytes() == (tmp_path / "want.glb").read_bytes()
    dark = copy.export(tmp_path / "dark.glb", textures=False)
    assert dark["lightmap_pages"] == 0 and any("lightmap" in w["message"] for w in dark["warnings"])

    size = (96, 54)
    assert np.array_equal(copy.render(size, game_dirs=game), original.render(size))
    assert not np.array_equal(copy.render(size), original.render(size))


def test_missing_textures_name_the_places_searched(tmp_path):
    """A GoldSrc map whose textures live in WADs: searched for in an empty folder, every material
    not found is listed with the places looked at, as `bspkit export --json` lists them."""
    path = corpus_path("hl1_v30/cs16_de_torabora.bsp")
    empty = tmp_path / "wads"
    empty.mkdir()
    bsp = bspkit.open(path)
    got = bsp.export(tmp_path / "py.glb", wads=[empty])
    cli = json.loads(run_cli("export", path, "-o", tmp_path / "cli.glb", "--wad", empty, "--json").stdout)
    assert got["missing"], "the map names textures it does not hold"
    assert [(m["material"], m["searched"]) for m in got["missing"]] == \
        [(m["material"], m["searched"]) for m in cli["missing"]]
    assert all(m["problem"] is None for m in got["missing"])
    assert (tmp_path / "py.glb").read_bytes() == (tmp_path / "cli.glb").read_bytes()
    model = bsp.model(wads=[empty])
    assert [m["material"] for m in model.missing] == [m["material"] for m in got["missing"]]
    assert bsp.model().missing == []  # no search, nothing reported
    with pytest.raises(FileNotFoundError):
        bsp.export(tmp_path / "x.glb", wads=[tmp_path / "nowhere"])
    with pytest.raises(FileNotFoundError):
        bsp.model(game_dirs=[tmp_path / "nowhere"])
    with pytest.raises(TypeError):
        bsp.model(game_dirs=str(empty))
