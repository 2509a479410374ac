"""bspkit: read, check, edit and write BSP maps of the Quake / Half-Life / Source family.

The C++ core of the bspkit command line, from Python::

    import bspkit
    bsp = bspkit.open("map.bsp")               # or bspkit.open(data_bytes)
    bsp.format, bsp.version                      # 'source', 20
    bsp.lumps["planes"].data()                   # read-only memoryview of the mapping, no copy
    bsp.entities[0]["classname"]                 # 'worldspawn'; edit, then bsp.save("out.bsp")
    bsp.check()                                  # list of findings (dicts), as `bspkit check --json`
    m = bsp.model()                              # numpy arrays: m.positions (V, 3), m.indices (T, 3), ...
    hits = bsp.trace(starts, ends)               # (N, 3) float arrays in, a structured array out

Errors in the input raise :class:`BspError` (with ``file``, ``lump`` and ``offset``).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from typing import Any, Iterable, Iterator, Optional, Union

from . import _bspkit
from ._bspkit import BspError

__all__ = ["open", "Bsp", "BspError", "Entity", "Lump", "Model", "Pak", "Vis", "survey_one", "survey", "find_maps",
           "__version__"]
__version__ = _bspkit.__version__

_COMPRESSION = {None: 0, True: 1, False: 2}

PathLike = Union[str, os.PathLike]


def _search(wads: Iterable[PathLike], game_dirs: Iterable[PathLike]) -> tuple[list[str], list[str]]:
    """The texture search paths as the core takes them; a path that is not there raises
    FileNotFoundError (as `bspkit export --wad / --game-dir` refuse it)."""
    if isinstance(wads, (str, os.PathLike)) or isinstance(game_dirs, (str, os.PathLike)):
        raise TypeError("wads and game_dirs are lists of paths")
    w = [os.fspath(p) for p in wads]
    g = [os.fspath(p) for p in game_dirs]
    for p in w:
        if not os.path.exists(p):
            raise FileNotFoundError(f"WAD file or folder not found: {p}")
    for p in g:
        if not os.path.isdir(p):
            raise FileNotFoundError(f"game folder not found (or not a folder): {p}")
    return w, g


def open(source: Union[str, os.PathLike, bytes, bytearray, memoryview], name: str = "<bytes>") -> "Bsp":  # noqa: A001
    """Opens a map from a path (memory-mapped) or from bytes already in memory.

    Raises BspError for a file bspkit cannot read (unknown format, truncated header, a directory...).
    """
    if isinstance(source, (str, os.PathLike)):
        return Bsp(_bspkit.open_path(os.fspath(source)))
    return Bsp(_bspkit.open_bytes(source, name))  # any buffer: bytes, bytearray, memoryview, numpy


class Lump:
    """One lump directory entry. ``data()`` is a read-only memoryview of the decoded bytes (a view of
    the file's mapping when the lump is not compressed; it keeps the map alive)."""

    __slots__ = ("_bsp", "index", "name", "offset", "length", "version", "fourcc", "compressed", "record_size",
                 "count")

    def __init__(self, bsp: "Bsp", row: tuple):
        self._bsp = bsp
        (self.index, self.name, self.offset, self.length, self.version, self.fourcc, self.compressed,
         self.record_size, self.count) = row

    def data(self) -> memoryview:
        """The decoded bytes (LZMA lumps decompressed), read-only, without copying."""
        return self._bsp._core.lump_data(self.index)

    def stored(self) -> memoryview:
        """The bytes as stored in the file (compressed when the lump is), read-only."""
        return self._bsp._core.lump_data(self.index, True)

    def __repr__(self) -> str:
        return (f"Lump({self.index}, {self.name!r}, offset={self.offset}, length={self.length}"
                f"{', compressed' if self.compressed else ''})")


class Entity(MutableMapping):
    """One entity: an ordered mapping of key -> value that keeps duplicate keys.

    ``e[key]`` is the first value of that key, ``e[key] = v`` sets the first pair or appends one,
    ``del e[key]`` removes every pair with that key; ``e.pairs`` is the full ordered list of
    [key, value] pairs and ``e.get_all(key)`` every value of a key. Text is the file's bytes as
    UTF-8 (bytes that are not UTF-8 map to U+EF80..U+EFFF, losslessly, as in `bspkit entities --json`).
    """

    __slots__ = ("pairs", "offset")

    def __init__(self, pairs: Iterable = (), offset: Optional[int] = None):
        if isinstance(pairs, dict):
            pairs = pairs.items()
        self.pairs: list[list[str]] = [[str(k), str(v)] for k, v in pairs]
        self.offset = offset

    def __getitem__(self, key: str) -> str:
        for k, v in self.pairs:
            if k == key:
                return v
        raise KeyError(key)

    def __setitem__(self, key: str, value: str) -> None:
        for p in self.pairs:
            if p[0] == key:
                p[1] = str(value)
                return
        self.pairs.append([str(key), str(value)])

    def __delitem__(self, key: str) -> None:
        n = len(self.pairs)
        self.pairs = [p for p in self.pairs if p[0] != key]
        if len(self.pairs) == n:
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        seen = set()
        for k, _ in self.pairs:
            if k not in seen:
                seen.add(k)
                yield k

    def __len__(self) -> int:
        return len({k for k, _ in self.pairs})

    def get_all(self, key: str) -> list[str]:
        return [v for k, v in self.pairs if k == key]

    def add(self, key: str, value: str) -> None:
        """Appends a pair even when the key exists (duplicate keys are legal in entity lumps)."""
        self.pairs.append([str(key), str(value)])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Entity):
            return self.pairs == other.pairs
        return MutableMapping.__eq__(self, other)

    def __repr__(self) -> str:
        return f"Entity({self.pairs!r})"


class Model:
    """The engine-neutral model of a map as numpy arrays (views of C++ memory, no copy; they keep
    the model alive).

    Vertices (V): ``positions`` (V, 3) float32, ``normals`` (V, 3), ``uv`` (V, 2) texture UVs,
    ``lightmap_uv`` (V, 2) lightmap atlas UVs, ``colors`` (V, 4) uint8.
    Triangles (T): ``indices`` (T, 3) uint32 into the vertex arrays, ``triangle_surface`` (T,).
    Surfaces (S): ``surface_material``, ``surface_model``, ``surface_face``, ``surface_kind``,
    ``surface_lightmap``, ``surface_first_vertex`` / ``surface_vertex_count``,
    ``surface_first_triangle`` / ``surface_triangle_count``.
    ``materials``: list of dicts (name, flags, width, height, texture); ``textures``: list of
    (name, (h, w, 4) uint8 array); ``lightmaps``: list of (style, (h, w, 4) uint8 atlas page).
    ``diagnostics``: what the build left out (dicts: severity, lump, offset, message);
    ``missing``: the materials a search (``Bsp.model(wads=..., game_dirs=...)``) did not find.
    """

    MATERIAL_FLAGS = {"sky": 1, "nodraw": 2, "trigger": 4, "water": 8, "translucent": 16, "clip": 32, "unlit": 64,
                      "alphatest": 128}
    SURFACE_KINDS = ("polygon", "mesh", "patch", "displacement", "billboard")

    def __init__(self, mesh: Any):
        self._mesh = mesh

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._mesh, name)

    @property
    def triangle_material(self):
        """Material index of every triangle (T,)."""
        return self._mesh.surface_material[self._mesh.triangle_surface]

    @property
    def triangle_model(self):
        """Model index (0 = the world) of every triangle (T,)."""
        return self._mesh.surface_model[self._mesh.triangle_surface]

    def triangle_areas(self):
        """Area of every triangle (T,) as float64."""
        import numpy as np

        p = self._mesh.positions.astype(np.float64)
        i = self._mesh.indices
        return 0.5 * np.linalg.norm(np.cross(p[i[:, 1]] - p[i[:, 0]], p[i[:, 2]] - p[i[:, 0]]), axis=1)

    def __repr__(self) -> str:
        return (f"Model({len(self._mesh.positions)} vertices, {len(self._mesh.indices)} triangles, "
                f"{len(self._mesh.surface_material)} surfaces, {len(self._mesh.materials)} materials)")


class Pak:
    """The pakfile of a Source map (lump 40): ``list()``, ``read(name)``, ``add(name, data)``,
    ``remove(pattern)``. Changes are written into the map by ``Bsp.save``."""

    def __init__(self, core: Any):
        self._core = core

    def list(self) -> list[dict]:
        return self._core.pak_list()

    def names(self) -> list[str]:
        return [e["name"] for e in self._core.pak_list()]

    def read(self, name: str) -> bytes:
        """The decoded bytes of one entry (KeyError when absent; the engine's name rule applies)."""
        return self._core.pak_read(name)

    def add(self, name: str, data: Union[bytes, bytearray, memoryview]) -> None:
        """Adds or replaces an entry."""
        self._core.pak_add(name, data)

    def remove(self, pattern: str) -> int:
        """Removes the entries matching a glob (* and ?, case-insensitive); returns how many."""
        return self._core.pak_remove(pattern)

    def __len__(self) -> int:
        return len(self._core.pak_list())


class Vis:
    """Visibility: ``clusters``, ``encoding``, ``pvs(c)`` / ``pas(c)`` as numpy bool arrays of
    length ``clusters``, ``cluster_of_leaf(leaf)``."""

    def __init__(self, core: Any):
        self._core = core
        info = core.vis_info()
        self.clusters: int = info["clusters"]
        self.encoding: str = info["encoding"]
        self.pas_stored: bool = info["pas_stored"]
        self.leaf_based: bool = info["leaf_based"]

    def pvs(self, cluster: int):
        return self._core.vis_row(cluster, False)

    def pas(self, cluster: int):
        return self._core.vis_row(cluster, True)

    def cluster_of_leaf(self, leaf: int) -> Optional[int]:
        return self._core.cluster_of_leaf(leaf)


class Bsp:
    """An open map. See the module docstring; made by :func:`bspkit.open`."""

    def __init__(self, core: Any):
        self._core = core
        self._entities: Optional[list[Entity]] = None
        self._lumps: Optional[dict[str, Lump]] = None

    # --- container -------------------------------------------------------
    @property
    def file_name(self) -> str:
        return self._core.file_name

    @property
    def format(self) -> str:
        """Format id: quake1, bsp2, goldsrc, quake2, quake3, nightfire or source."""
        return self._core.format

    @property
    def variant(self) -> str:
        return self._core.variant

    @property
    def version(self) -> Optional[int]:
        """The header's version (None for BSP2 / 2PSB, which have none)."""
        return self._core.version

    @property
    def revision(self) -> int:
        """Source map revision (0 elsewhere)."""
        return self._core.revision

    @property
    def big_endian(self) -> bool:
        return self._core.big_endian

    @property
    def lumps(self) -> dict[str, Lump]:
        """Lump name -> :class:`Lump`, in directory order."""
        if self._lumps is None:
            self._lumps = {row[1]: Lump(self, row) for row in self._core.lump_table()}
        return self._lumps

    def lump(self, index_or_name: Union[int, str]) -> Lump:
        if isinstance(index_or_name, int):
            return list(self.lumps.values())[index_or_name]
        return self.lumps[index_or_name]

    def data(self) -> memoryview:
        """The whole file as read, read-only, without copying."""
        return self._core.file_data()

    def diagnostics(self) -> list[dict]:
        """Warnings found while reading (lumps past the end of the file, overlaps, ...)."""
        return self._core.diagnostics()

    # --- entities ----------------------------------------------------------
    @property
    def entities(self) -> list[Entity]:
        """The entity lump as a list of :class:`Entity` (ordered, duplicate keys kept). Edit it in
        place (or assign a new list); ``save`` writes it back. An unchanged list saves the original bytes."""
        if self._entities is None:
            self._entities = [Entity(pairs, offset) for pairs, offset in self._core.entities()]
        return self._entities

    @entities.setter
    def entities(self, value: Iterable) -> None:
        self._entities = [e if isinstance(e, Entity) else Entity(e) for e in value]

    def _flush(self) -> None:
        if self._entities is not None:
            self._core.set_entities([[(k, v) for k, v in e.pairs] for e in self._entities])
            self._lumps = None

    def save(self, path: Union[str, os.PathLike], compress: Optional[bool] = None) -> None:
        """Writes the map (temporary file + rename). compress: None keeps each lump as it is,
        True LZMA-compresses a Source map's lumps (bspzip -repack), False removes all compression."""
        self._flush()
        self._core.save(os.fspath(path), _COMPRESSION[compress])

    def tobytes(self, compress: Optional[bool] = None) -> bytes:
        """The bytes ``save`` would write."""
        self._flush()
        return self._core.serialize(_COMPRESSION[compress])

    # --- algorithms --------------------------------------------------------
    def check(self) -> list[dict]:
        """Every check of `bspkit check`: a list of findings, each a dict with severity ('error',
        'warning', 'info'), lump, record, field, message and offset (None when not applicable)."""
        return self._core.check()

    def model(self, lightmaps: bool = True, textures: bool = True, all_models: bool = True,
              patch_level: int = -1, hdr: bool = False, wads: Iterable[PathLike] = (),
              game_dirs: Iterable[PathLike] = ()) -> Model:
        """Builds the engine-neutral model (the GIL is released while it is built).

        wads / game_dirs: where to find what the map names but does not hold, as `bspkit export
        --wad / --game-dir` look: WAD2 / WAD3 files (or folders of them), and game folders for
        Quake 2 .wal, Quake 3 images, shaders and .pk3, Source VMT/VTF and VPKs, and Quake 3
        lightmaps kept outside the map (maps/<map>/lm_NNNN). What was not found is in
        ``Model.missing``."""
        return Model(self._core.model(lightmaps, textures, all_models, patch_level, hdr, *_search(wads, game_dirs)))

    def trace(self, starts, ends, hull: int = -1, mins=None, maxs=None, models: bool = False, mask: int = 0,
              threads: int = 0):
        """Traces N rays at once ((N, 3) arrays, any float type) through the map's collision, as
        `bspkit trace --rays` does. Returns a numpy structured array of N rows: fraction, end (3),
        normal (3), dist, hit, startsolid, allsolid, triangle, inopen, inwater (Quake 1 family clip
        hulls: the trace passed an empty / a water, slime, lava or sky leaf), contents (engine value),
        content_flags, surface_flags, model, brush. hull: Quake 1 / GoldSrc clip hull; mins/maxs: a
        box; models: also hit brush models at their entities' origins, not those the game spawns not
        solid (triggers, ladders, zones, "Passable" doors...: TraceOptions::models in query.hpp).
        The GIL is released, the rays run on every core.
        A ray that cannot be traced (coordinates too large for distances to the map's planes)
        raises BspError for the call, naming the first such ray and how many there were."""
        import numpy as np

        starts = np.asarray(starts, dtype=np.float32).reshape(-1, 3)
        ends = np.asarray(ends, dtype=np.float32).reshape(-1, 3)
        return self._core.trace(starts, ends, hull, mins, maxs, models, mask, threads)

    def leaf_at(self, point) -> dict:
        """The leaf, cluster, area and contents at a point."""
        return self._core.leaf_at(tuple(float(x) for x in point))

    def visible(self, a, b) -> dict:
        """Whether point ``b`` can be seen from ``a``, as `bspkit visible` says: ``pvs`` (b's cluster
        is in a's PVS; True on maps without vis data), ``line_of_sight`` (a line from a to b is not
        blocked by opaque solids; on Quake 1 / BSP2 maps, as QuakeC's visible(), nor does it cross
        from the open into water, slime, lava or sky), ``visible`` (both), ``from`` and ``to`` (leaf
        and cluster of each point), ``sight`` (that line trace: fraction, end, startsolid,
        inopen, inwater) and ``vis_error`` (None, or why the map's vis data could not be read:
        every cluster then counts as visible)."""
        return self._core.visible(tuple(float(x) for x in a), tuple(float(x) for x in b))

    @property
    def vis(self) -> Vis:
        return Vis(self._core)

    @property
    def pak(self) -> Pak:
        """The Source pakfile (BspError for other formats)."""
        return Pak(self._core)

    @property
    def props(self) -> Optional[list[dict]]:
        """Source static props (dicts: model, origin, angles, skin, solid, ...); None without a sprp
        game lump and for the other formats, which have none."""
        if self.format != "source":
            return None
        return self._core.static_props()

    def export(self, path: Union[str, os.PathLike], lighting: str = "baked", all_models: bool = True,
               textures: bool = True, sky: bool = True, tools: bool = False, scale: float = 1.0, y_up: bool = False,
               skip: Iterable[str] = (), wads: Iterable[PathLike] = (), game_dirs: Iterable[PathLike] = ()) -> dict:
        """Exports to glTF (.glb / .gltf) or OBJ (.obj) like `bspkit export`; returns its summary, with
        ``missing`` (the materials the search did not find: material, searched, problem),
        ``lightmap_pages`` (Quake 3 pages loaded from outside the map) and ``warnings`` (what the
        build left out, as `bspkit export --json` lists it, and the archives the search could not
        read, which the command prints apart). wads / game_dirs: as for :meth:`model`."""
        self._flush()
        return self._core.export(os.fspath(path), lighting, all_models, textures, sky, tools, scale, y_up, list(skip),
                                 *_search(wads, game_dirs))

    def render(self, size: tuple[int, int] = (640, 360), view: str = "spawn",
               camera: Optional[Iterable[float]] = None, angles: Optional[Iterable[float]] = None,
               fov: float = 90.0, pvs: bool = True, textures: bool = True, lightmaps: bool = True,
               threads: int = 0, wads: Iterable[PathLike] = (), game_dirs: Iterable[PathLike] = ()) -> "np.ndarray":
        """A picture of the map like `bspkit render`, as a (height, width, 4) uint8 RGBA array.

        view: "spawn" (the first player start; the overview without one), "overview"
        (orthographic from above) or "thumbnail"; camera=(x, y, z) with angles=(pitch, yaw[, roll])
        places the eye instead. Textures are those the map embeds (else flat colours), and those
        wads / game_dirs hold (as for :meth:`model`). Sky surfaces show the map's sky: Quake 1's own
        layers, else the sky box game_dirs hold, with Quake 3's cloud layers (else one colour)."""
        self._flush()
        w, h = (int(v) for v in size)
        return _bspkit._render(self._core, w, h, view, None if camera is None else [float(v) for v in camera],
                               None if angles is None else [float(v) for v in angles], float(fov), bool(pvs),
                               bool(textures), bool(lightmaps), int(threads), *_search(wads, game_dirs))

    def decompile(self, path: Union[str, os.PathLike], format: Optional[str] = None, brushes: str = "lumps",
                  merge: bool = True) -> dict:
        """Writes the map back as an editor map like `bspkit decompile`: a Hammer VMF for Source (or when
        ``path`` ends in .vmf), a .map in the family's dialect otherwise (``format``: quake, valve220, quake2,
        quake2-standard, quake3, quake3-bp, vmf). Returns the counts (entities, brushes, sides, ...)."""
        self._flush()
        return _bspkit._decompile(self._core, os.fspath(path), format or "", brushes, bool(merge))

    def __repr__(self) -> str:
        v = self.version if self.version is not None else self.variant
        return f"<bspkit.Bsp {self.file_name!r} {self.format} {v}>"


# --- surveys of map archives ------------------------------------------------

def survey_one(path: Union[str, os.PathLike]) -> dict:
    """One map's survey record (format, version, lump counts, check findings, entity classes,
    texture names, world bounds) as a dict, the same as a line of `bspkit survey`. A file that
    cannot be read gives a record with ``error`` set; this never raises BspError."""
    import json

    return json.loads(_bspkit.survey_json(os.fspath(path)))


def find_maps(*roots: Union[str, os.PathLike]) -> list[str]:
    """Every *.bsp under the roots (recursively; files taken as they are), sorted, exactly as
    `bspkit survey` finds them."""
    return _bspkit.find_maps([os.fspath(r) for r in roots])


from . import survey  # noqa: E402  (bspkit.survey.run: the survey of an archive on Dask)
