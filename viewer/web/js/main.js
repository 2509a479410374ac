// bspkit viewer page: opens a BSP (drag-and-drop, file picker or ?map=URL),
// with the files that hold what the map keeps outside it (WADs, pk3s, a game
// folder, a .lit: picked or dropped with it, or ?companion=URL),
// hands it to the WebAssembly core in a Web Worker (js/worker.js), shows the
// glTF the core exports (the same bytes as `bspkit export`) with three.js,
// flies a camera through it with PVS culling from the camera's cluster, picks
// entities and lists the `bspkit check` findings. Coordinates: the glb's root
// rotates the Z-up map so that three.js world = (x, z, -y) of map (x, y, z).
// Tests drive it through window.bspkitViewer (see the end of this file).
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';

const $ = (id) => document.getElementById(id);
const NO_FACE = 0xFFFFFFFF;
const TOOL_FLAGS = ['nodraw', 'trigger', 'clip'];
const BACKGROUND = 0x203040;

const toThree = (p) => new THREE.Vector3(p[0], p[2], -p[1]);
const toMap = (v) => [v.x, -v.z, v.y];

// ---------------------------------------------------------------- state
const state = {
    state: 'idle',       // idle | loading | ready | error
    error: null,         // the one-line error text shown on the page
    name: null,          // the map's name (the file name given to the core)
    info: null,          // open()'s summary of the file
    summary: null,       // scene().summary (equal to `bspkit export --json`)
    timing: {},          // ms: read, open, scene, gltf, firstFrame (from the start of the load)
    drawnFaces: 0,       // surfaces drawn this frame (after PVS and toggles)
    totalFaces: 0,       // surfaces of the shown meshes without PVS
    leaf: -1, cluster: -1, hasVisibility: false,
    selected: null,      // {index, classname, model, origin, keyvalues}
    entities: [],
    check: [],
    fps: 0,
    frames: 0,
    toggles: { sky: true, tools: false, brushEntities: true, pointEntities: true, lightmapOnly: false, pvs: true },
};

// ---------------------------------------------------------------- three.js
const canvas = $('canvas');
const renderer = new THREE.WebGLRenderer({ canvas, antialias: false, preserveDrawingBuffer: true });
renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
const scene = new THREE.Scene();
scene.background = new THREE.Color(BACKGROUND);
const camera = new THREE.PerspectiveCamera(75, 1, 4, 65536);
camera.rotation.order = 'YXZ';
let yaw = 0, pitch = 0;
const loader = new GLTFLoader();

let root = null;           // the glTF scene
let records = [];          // one per three.js Mesh (= glTF primitive)
let points = null;         // InstancedMesh of the point entities' boxes
let pointEntities = [];    // instance id -> entity
let lightmapMaterial = null;
let visible = null;        // Uint8Array(faceBound) from locate(), or null: everything
let worldBox = new THREE.Box3();

function resize() {
    const r = canvas.parentElement.getBoundingClientRect();
    const w = Math.max(1, Math.floor(r.width)), h = Math.max(1, Math.floor(r.height));
    renderer.setSize(w, h, false);
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
}
new ResizeObserver(resize).observe(canvas.parentElement);
resize();

// ---------------------------------------------------------------- worker
const worker = new Worker(new URL('./worker.js', import.meta.url));
let nextId = 1;
const pending = new Map();
worker.onmessage = (e) => {
    const m = e.data;
    if (m.type === 'progress') return progress(m.stage, m.fraction);
    const resolve = pending.get(m.id);
    pending.delete(m.id);
    if (resolve) resolve(m);
};
worker.onerror = (e) => {
    for (const resolve of pending.values()) resolve({ error: `viewer worker: ${e.message || 'failed'}` });
    pending.clear();
};
const call = (msg, transfer = []) => new Promise((resolve) => {
    msg.id = nextId++;
    pending.set(msg.id, resolve);
    worker.postMessage(msg, transfer);
});

// ---------------------------------------------------------------- UI helpers
let readyWaiters = [];
function setState(s) {
    state.state = s;
    document.body.dataset.state = s;
    if (s === 'ready' || s === 'error') {
        const w = readyWaiters;
        readyWaiters = [];
        for (const f of w) f(s);
    }
}
function progress(stage, fraction) {
    $('progress').hidden = false;
    $('progress-label').textContent = `${stage} ${Math.round(Math.max(0, Math.min(1, fraction)) * 100)}%`;
    $('progress-fill').style.width = `${Math.max(0, Math.min(1, fraction)) * 100}%`;
}
function fail(message) {
    state.error = String(message).split('\n')[0];
    $('error').textContent = state.error;
    $('error').hidden = false;
    $('progress').hidden = true;
    clearMap();
    setState('error');
}
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

// ---------------------------------------------------------------- loading
let loadToken = 0;
let t0 = 0;
let firstFramePending = false;

const urlName = (url) => decodeURIComponent(new URL(url, location.href).pathname.split('/').pop() || url);

async function download(url, stage) {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
    const total = Number(response.headers.get('content-length')) || 0;
    const reader = response.body.getReader();
    const chunks = [];
    let got = 0;
    for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        got += value.length;
        if (total) progress(stage, got / total);
    }
    const bytes = new Uint8Array(got);
    let at = 0;
    for (const c of chunks) { bytes.set(c, at); at += c.length; }
    return bytes;
}

// The map at `url`, with the files at `companionUrls` (each named by the last part of its URL).
async function openUrl(url, companionUrls = []) {
    const token = ++loadToken;
    const name = urlName(url);
    startLoad(name);
    let bytes;
    const companions = [];
    try {
        bytes = await download(url, 'download');
    } catch (e) {
        if (token === loadToken) fail(`${url}: cannot fetch the map: ${e.message || e}`);
        return;
    }
    // A file that cannot be fetched is said on the Textures panel; the map opens without it.
    const notes = [];
    for (const c of companionUrls) {
        try {
            companions.push({ path: urlName(c), bytes: await download(c, `download ${urlName(c)}`) });
        } catch (e) {
            notes.push(`${c}: not fetched: ${e.message || e}`);
        }
    }
    if (token !== loadToken) return;
    await openBytes(name, bytes, token, companions, notes);
}

// Files the core searches for what a map keeps outside it (textures::resolve, the map's .lit); others
// in a dropped folder are left out, and so is what passes kCompanionBytes.
const COMPANION_EXTENSIONS = new Set(['wad', 'pk3', 'pk4', 'vpk', 'pak', 'zip', 'wal', 'pcx', 'tga', 'jpg', 'jpeg',
    'png', 'vtf', 'vmt', 'shader', 'lit', 'lmp']);
const kCompanionBytes = 1 << 30;
const extension = (path) => (path.match(/\.([^./\\]+)$/) || [])[1]?.toLowerCase() ?? '';

// Files picked or dropped together: [{file, path}]. The first .bsp (in path order) is the map; the
// companions are the others the core can use.
async function openFiles(entries) {
    const maps = entries.filter((e) => extension(e.path) === 'bsp').sort((a, b) => a.path.localeCompare(b.path));
    if (!maps.length) {
        ++loadToken;
        startLoad(entries.length === 1 ? entries[0].path : `${entries.length} files`);
        return fail(`no .bsp among the ${entries.length} file${entries.length === 1 ? '' : 's'} given: open a map (with its WADs, pk3s or game folder)`);
    }
    const map = maps[0];
    const token = ++loadToken;
    startLoad(map.file.name);
    const others = maps.slice(1);
    const notes = others.slice(0, 3).map((m) => `${m.path}: not opened (one map at a time: ${map.path} is shown)`);
    if (others.length > 3) notes.push(`... and ${others.length - 3} more .bsp files not opened`);
    const companions = [];
    let total = 0;
    let bytes;
    try {
        bytes = new Uint8Array(await map.file.arrayBuffer());
        for (const e of entries) {
            if (e === map || extension(e.path) === 'bsp') continue;
            if (!COMPANION_EXTENSIONS.has(extension(e.path))) continue;
            if (total + e.file.size > kCompanionBytes) {
                notes.push(`${e.path}: not read (the files given with the map pass ${kCompanionBytes >> 20} MiB)`);
                continue;
            }
            total += e.file.size;
            progress(`reading ${e.path}`, 0);
            companions.push({ path: e.path, bytes: new Uint8Array(await e.file.arrayBuffer()) });
        }
    } catch (e) {
        if (token === loadToken) fail(`${map.file.name}: cannot read the files: ${e.message || e}`);
        return;
    }
    if (token !== loadToken) return;
    await openBytes(map.file.name, bytes, token, companions, notes);
}

// A dropped folder's files, with their paths in it (DataTransferItem.webkitGetAsEntry).
async function droppedEntries(items) {
    const out = [];
    const walk = async (entry) => {
        if (!entry) return;
        if (entry.isFile) {
            const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
            out.push({ file, path: entry.fullPath.replace(/^\/+/, '') });
        } else if (entry.isDirectory) {
            const reader = entry.createReader();
            for (;;) {
                const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
                if (!batch.length) break;
                for (const child of batch) await walk(child);
            }
        }
    };
    const roots = [];
    for (const item of items) if (item.kind === 'file') roots.push(item.webkitGetAsEntry ? item.webkitGetAsEntry() : null);
    for (const r of roots) await walk(r);
    return out;
}

function startLoad(name) {
    t0 = performance.now();
    state.timing = {};
    state.loadingFrames = 0;
    state.name = name;
    state.error = null;
    $('error').hidden = true;
    $('title').textContent = name;
    document.title = `${name} — bspkit viewer`;
    setState('loading');
    progress('reading', 0);
}

async function openBytes(name, bytes, token = ++loadToken, companions = [], notes = []) {
    if (state.name !== name || state.state !== 'loading') startLoad(name);
    state.timing.read = performance.now() - t0;
    state.companions = companions.map((c) => c.path);
    const r = await call({ type: 'open', name, bytes, companions, options: sceneOptions() },
        [bytes.buffer, ...companions.map((c) => c.bytes.buffer)]);
    if (token !== loadToken) return;
    if (r.error) return fail(r.error);
    state.info = r.info;
    if (state.info.textures) state.info.textures.warnings = [...notes, ...state.info.textures.warnings];
    state.entities = r.entities;
    state.check = r.check;
    state.timing.open = r.timing.open;
    state.timing.scene = r.timing.scene;
    visible = null;
    state.leaf = state.cluster = -1;
    progress('building the view', 1);
    try {
        await showScene(r.scene, token);
    } catch (e) {
        if (token === loadToken) fail(`${name}: cannot show the model: ${e.message || e}`);
        return;
    }
    if (token !== loadToken) return;
    state.timing.gltf = performance.now() - t0;
    showEntities();
    showCheck();
    showTextures();
    select(null);
    placeAtStart();
    lastLocated = null;
    firstFramePending = true;   // 'ready' once the first frame is drawn
}

const sceneOptions = () => ({ sky: true, tools: state.toggles.tools });

function dispose(object) {
    object.traverse((o) => {
        if (o.geometry) o.geometry.dispose();
        const mats = o.material ? (Array.isArray(o.material) ? o.material : [o.material]) : [];
        for (const m of mats) {
            for (const v of Object.values(m)) if (v && v.isTexture) v.dispose();
            m.dispose();
        }
    });
}

// Where a family keeps the textures a map does not hold (what to give with it).
const IN_WADS = 'open it with the .wad files its "wad" key names (or drop its game folder with it)';
const WHERE_TEXTURES = {
    quake1: IN_WADS,
    bsp2: IN_WADS,
    goldsrc: IN_WADS,
    quake2: 'drop its game folder (baseq2: textures/*.wal and pics/colormap.pcx, or its .pak files) with it',
    quake3: 'drop its game folder (baseq3: the *.pk3 files, or textures/ and scripts/) with it',
    source: 'drop its game folder (the *_dir.vpk with its *_NNN.vpk files, or materials/) with it',
    other: 'open it with the files that hold them, or drop its game folder with it',
};

// What the map keeps outside it: how many materials have no texture, what the files given with it
// brought, and what is still missing.
function showTextures() {
    const t = state.info && state.info.textures;
    const box = $('textures');
    box.textContent = '';
    $('textures-count').textContent = '';
    if (!t) return;
    const line = (text, cls) => {
        const p = document.createElement('p');
        if (cls) p.className = cls;
        p.textContent = text;
        box.appendChild(p);
    };
    $('textures-count').textContent = `(${t.materials - t.untextured} / ${t.materials})`;
    if (t.searched)
        line(`${t.found} texture${t.found === 1 ? '' : 's'} found in the ${state.companions.length} file${state.companions.length === 1 ? '' : 's'} given with the map`
            + (t.lightmapPages ? `, ${t.lightmapPages} lightmap pages` : ''));
    if (t.missing.length) {
        line(`${t.missing.length} not found:`, 'missing');
        const list = document.createElement('ul');
        for (const m of t.missing.slice(0, 50)) {
            const li = document.createElement('li');
            li.textContent = m.problem ? `${m.material} (${m.problem})` : m.material;
            list.appendChild(li);
        }
        if (t.missing.length > 50) {
            const li = document.createElement('li');
            li.textContent = `… ${t.missing.length - 50} more`;
            list.appendChild(li);
        }
        box.appendChild(list);
    } else if (!t.searched && t.untextured > 0) {
        line(`${t.untextured} of ${t.materials} materials have no texture in the map: ${WHERE_TEXTURES[state.info.format] || WHERE_TEXTURES.other}`, 'missing');
    }
    for (const w of t.warnings) line(w, 'warning');
}

function clearMap() {
    if (root) { scene.remove(root); dispose(root); root = null; }
    if (points) { scene.remove(points); dispose(points); points = null; }
    if (lightmapMaterial) { lightmapMaterial.map && lightmapMaterial.map.dispose(); lightmapMaterial.dispose(); lightmapMaterial = null; }
    records = [];
    pointEntities = [];
    state.drawnFaces = state.totalFaces = 0;
    $('entity').textContent = 'click an entity (brush entity or box) to see its key/values';
    $('check').textContent = '';
    $('check-count').textContent = '';
    $('textures').textContent = '';
    $('textures-count').textContent = '';
    $('stats').textContent = '';
}

async function showScene(s, token) {
    const gltf = await new Promise((resolve, reject) => loader.parse(s.glb.buffer, './', resolve, reject));
    if (token !== undefined && token !== loadToken) { dispose(gltf.scene); return; }
    if (root) { scene.remove(root); dispose(root); }
    if (lightmapMaterial) { lightmapMaterial.map && lightmapMaterial.map.dispose(); lightmapMaterial.dispose(); lightmapMaterial = null; }
    root = gltf.scene;
    scene.add(root);
    state.summary = s.summary;
    state.faceBound = s.faceBound;
    const byPrimitive = new Map();
    for (const r of s.ranges) byPrimitive.set(`${r.mesh}/${r.primitive}`, r);
    records = [];
    root.updateMatrixWorld(true);
    root.traverse((o) => {
        if (!o.isMesh) return;
        const assoc = gltf.parser.associations.get(o) || {};
        let model = -1, entity = -1;
        for (let p = o; p; p = p.parent) {
            if (p.userData && p.userData.model !== undefined) {
                model = p.userData.model;
                entity = p.userData.entity !== undefined ? p.userData.entity : -1;
                break;
            }
        }
        const range = byPrimitive.get(`${assoc.meshes}/${assoc.primitives}`) || null;
        const index = o.geometry.index;
        const flags = (o.material.userData && o.material.userData.flags) || [];
        records.push({
            mesh: o, model, entity, flags, range,
            lit: !!(o.material.userData && o.material.userData.lightmap),
            material: o.material,
            original: range && index ? index.array.slice() : null,
        });
    });
    worldBox = new THREE.Box3();
    for (const r of records) if (r.model === 0) worldBox.expandByObject(r.mesh);
    if (worldBox.isEmpty()) worldBox.setFromObject(root);
    const extent = worldBox.isEmpty() ? 4096 : worldBox.getSize(new THREE.Vector3()).length();
    camera.far = Math.max(4096, extent * 2);
    camera.near = Math.max(1, Math.min(4, camera.far / 20000));
    camera.updateProjectionMatrix();
    if (s.lightmap) {
        const tex = new THREE.DataTexture(s.lightmap.pixels, s.lightmap.width, s.lightmap.height, THREE.RGBAFormat);
        tex.channel = 1;
        tex.colorSpace = THREE.SRGBColorSpace;
        tex.magFilter = THREE.LinearFilter;
        tex.minFilter = THREE.LinearFilter;
        tex.needsUpdate = true;
        lightmapMaterial = new THREE.MeshBasicMaterial({ map: tex, side: THREE.DoubleSide });
    }
    applyToggles();
}

// ---------------------------------------------------------------- entities
function classColour(name) {
    let h = 0;
    for (const c of name) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    return new THREE.Color().setHSL((h % 360) / 360, 0.8, 0.6);
}

function showEntities() {
    if (points) { scene.remove(points); dispose(points); points = null; }
    pointEntities = state.entities.filter((e) => e.model < 0 && Array.isArray(e.origin) && e.origin.every(Number.isFinite));
    if (!pointEntities.length) return;
    const box = new THREE.BoxGeometry(16, 16, 16);
    const material = new THREE.MeshBasicMaterial({ color: 0xffffff });
    points = new THREE.InstancedMesh(box, material, pointEntities.length);
    const m = new THREE.Matrix4();
    pointEntities.forEach((e, i) => {
        m.makeTranslation(toThree(e.origin));
        points.setMatrixAt(i, m);
        points.setColorAt(i, classColour(e.classname || ''));
    });
    points.instanceMatrix.needsUpdate = true;
    points.computeBoundingSphere();
    points.visible = state.toggles.pointEntities;
    scene.add(points);
}

function select(index) {
    const e = index === null || index === undefined ? null : state.entities.find((x) => x.index === index) || null;
    state.selected = e ? { index: e.index, classname: e.classname, model: e.model, origin: e.origin, keyvalues: e.keyvalues } : null;
    if (!e) {
        $('entity').textContent = 'click an entity (brush entity or box) to see its key/values';
        return;
    }
    const rows = (e.keyvalues || []).map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join('');
    $('entity').innerHTML = `<div class="classname">${esc(e.classname || '(no classname)')}</div>`
        + `<div>entity ${e.index}${e.model >= 0 ? ` &middot; model *${e.model}` : ''}</div><table>${rows}</table>`;
}

function showCheck() {
    const list = $('check');
    list.textContent = '';
    const counts = { error: 0, warning: 0, info: 0 };
    // bspkit check prints one line for several findings (e.g. "14 lumps: ..."): one item per printed line.
    let previous = null;
    for (const f of state.check) {
        counts[f.severity] = (counts[f.severity] || 0) + 1;
        const text = f.line || f.message;
        if (previous && previous.text === text && !f.position && !previous.finding.position) {
            previous.li.dataset.findings = String(Number(previous.li.dataset.findings) + 1);
            continue;
        }
        const li = document.createElement('li');
        li.className = f.severity + (f.position ? ' has-position' : '');
        li.textContent = text;
        li.dataset.findings = '1';
        li.dataset.index = String(state.check.indexOf(f));
        if (f.position) {
            li.title = `fly to (${f.position.map((v) => Math.round(v)).join(', ')})`;
            li.onclick = () => flyToFinding(f);
        }
        list.appendChild(li);
        previous = { text, li, finding: f };
    }
    $('check-count').textContent = state.check.length
        ? `(${counts.error} errors, ${counts.warning} warnings, ${counts.info} notes)` : '(no findings)';
}

function flyToFinding(f) {
    // The module's view point: open space in front of the face (or beside the point) with a clear line to it.
    if (f.view) return flyTo(f.view, { lookAt: f.position, duration: 500 });
    const target = toThree(f.position);
    const dir = new THREE.Vector3();
    camera.getWorldDirection(dir);
    const from = target.clone().addScaledVector(dir, -160).add(new THREE.Vector3(0, 48, 0));
    flyTo(toMap(from), { lookAt: f.position, duration: 500 });
}

// ---------------------------------------------------------------- toggles
function applyToggles() {
    const t = state.toggles;
    for (const r of records) {
        let show = true;
        if (!t.sky && r.flags.includes('sky')) show = false;
        if (!t.tools && r.flags.some((f) => TOOL_FLAGS.includes(f))) show = false;
        if (!t.brushEntities && r.model > 0) show = false;
        r.mesh.visible = show;
        r.mesh.material = t.lightmapOnly && r.lit && lightmapMaterial ? lightmapMaterial : r.material;
    }
    if (points) points.visible = t.pointEntities;
    applyVisibility();
}

// Rebuilds each world primitive's index buffer from its surfaces' ranges,
// keeping the faces the camera's cluster can see.
function applyVisibility() {
    let drawn = 0, total = 0;
    const vis = state.toggles.pvs ? visible : null;
    for (const r of records) {
        if (!r.range || !r.original) continue;
        const n = r.range.face.length;
        if (r.mesh.visible) total += n;
        const geometry = r.mesh.geometry, index = geometry.index;
        if (!vis || r.model !== 0) {
            if (geometry.drawRange.count !== Infinity || r.culled) {
                index.array.set(r.original);
                index.clearUpdateRanges();
                index.needsUpdate = true;
                geometry.setDrawRange(0, Infinity);
                r.culled = false;
            }
            if (r.mesh.visible) drawn += n;
            continue;
        }
        const { face, first, count } = r.range;
        const out = index.array, src = r.original;
        let w = 0, runStart = -1, runEnd = -1, kept = 0;
        for (let i = 0; i < n; ++i) {
            const f = face[i];
            if (f !== NO_FACE && f < vis.length && !vis[f]) continue;
            ++kept;
            const a = first[i], c = count[i];
            if (a === runEnd) { runEnd += c; continue; }
            if (runEnd > runStart) { out.set(src.subarray(runStart, runEnd), w); w += runEnd - runStart; }
            runStart = a; runEnd = a + c;
        }
        if (runEnd > runStart) { out.set(src.subarray(runStart, runEnd), w); w += runEnd - runStart; }
        index.clearUpdateRanges();
        index.addUpdateRange(0, Math.max(w, 1));
        index.needsUpdate = true;
        geometry.setDrawRange(0, w);
        r.culled = true;
        if (r.mesh.visible) drawn += kept;
    }
    state.drawnFaces = drawn;
    state.totalFaces = total;
}

const toggleIds = { 't-sky': 'sky', 't-brush': 'brushEntities', 't-points': 'pointEntities', 't-lightmap': 'lightmapOnly', 't-pvs': 'pvs' };
for (const [id, key] of Object.entries(toggleIds)) {
    $(id).addEventListener('change', () => setToggle(key, $(id).checked));
}
$('t-tools').addEventListener('change', () => setToggle('tools', $('t-tools').checked));

async function setToggle(key, value) {
    const ids = Object.fromEntries(Object.entries(toggleIds).map(([a, b]) => [b, a]));
    ids.tools = 't-tools';
    $(ids[key]).checked = !!value;
    if (state.toggles[key] === !!value) return;
    state.toggles[key] = !!value;
    if (key !== 'tools' || state.state !== 'ready') return applyToggles();
    // Tool surfaces are not in the default export: ask the core for scene({tools}).
    const token = loadToken;
    setState('loading');
    progress(value ? 'adding tool surfaces' : 'removing tool surfaces', 0.5);
    const r = await call({ type: 'scene', options: sceneOptions() });
    if (token !== loadToken) return;
    if (r.error) return fail(r.error);
    await showScene(r.scene, token);
    firstFramePending = true;
}

// ---------------------------------------------------------------- camera
const keys = new Set();
const keyOf = (e) => e.code;
window.addEventListener('keydown', (e) => {
    if (e.target && e.target.tagName === 'INPUT' && e.target.type !== 'checkbox') return;
    if (e.code === 'KeyL' && state.state === 'ready') canvas.requestPointerLock && canvas.requestPointerLock();
    keys.add(keyOf(e));
    if (['Space', 'ArrowUp', 'ArrowDown'].includes(e.code)) e.preventDefault();
});
window.addEventListener('keyup', (e) => keys.delete(keyOf(e)));
window.addEventListener('blur', () => keys.clear());

function setView(position, lookAtThree) {
    camera.position.copy(position);
    if (lookAtThree) {
        const d = lookAtThree.clone().sub(position);
        if (d.lengthSq() > 1e-6) {
            d.normalize();
            yaw = Math.atan2(-d.x, -d.z);
            pitch = Math.asin(Math.max(-1, Math.min(1, d.y)));
        }
    }
    pitch = Math.max(-1.55, Math.min(1.55, pitch));
    camera.rotation.set(pitch, yaw, 0, 'YXZ');
}

const START_CLASSES = [/^info_player_start$/i, /^info_player_(deathmatch|coop|teamspawn|terrorist|counterterrorist|combine|rebel)$/i,
    /^team_ctf_(red|blue)(player|spawn)$/i, /player.*start|^info_player_|spawn/i];

function placeAtStart() {
    let start = null;
    for (const re of START_CLASSES) {
        start = state.entities.find((e) => re.test(e.classname || '') && Array.isArray(e.origin));
        if (start) break;
    }
    if (start) {
        const kv = new Map((start.keyvalues || []).map(([k, v]) => [k.toLowerCase(), v]));
        let a = 0;
        if (kv.has('angles')) a = Number(String(kv.get('angles')).trim().split(/\s+/)[1]) || 0;
        else if (kv.has('angle')) a = Number(kv.get('angle')) || 0;
        yaw = THREE.MathUtils.degToRad(a) - Math.PI / 2;
        pitch = 0;
        setView(toThree([start.origin[0], start.origin[1], start.origin[2] + 64]), null);
        state.start = { index: start.index, classname: start.classname };
        return;
    }
    state.start = null;
    if (worldBox.isEmpty()) { setView(new THREE.Vector3(0, 0, 0), null); return; }
    const centre = worldBox.getCenter(new THREE.Vector3());
    const radius = worldBox.getSize(new THREE.Vector3()).length() / 2;
    const distance = radius / Math.sin(THREE.MathUtils.degToRad(camera.fov / 2));
    const from = centre.clone().addScaledVector(new THREE.Vector3(1, 1.1, 0.8).normalize(), distance);
    setView(from, centre);
}

let flight = null;   // {from, to, lookAt, start, duration}
function flyTo(position, options = {}) {
    const to = toThree(position);
    const look = options.lookAt ? toThree(options.lookAt) : null;
    if (options.yaw !== undefined) yaw = options.yaw;
    if (options.pitch !== undefined) pitch = options.pitch;
    if (!options.duration) { flight = null; setView(to, look); return; }
    flight = { from: camera.position.clone(), to, look, start: performance.now(), duration: options.duration };
}

// Mouse: drag looks around, a click without drag picks, L / double-click locks the pointer.
let drag = null;
canvas.addEventListener('pointerdown', (e) => {
    canvas.focus();
    if (document.pointerLockElement === canvas) return;
    drag = { x: e.clientX, y: e.clientY, moved: 0, id: e.pointerId };
    canvas.setPointerCapture(e.pointerId);
});
canvas.addEventListener('pointermove', (e) => {
    if (document.pointerLockElement === canvas) return;
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    drag.moved += Math.abs(dx) + Math.abs(dy);
    drag.x = e.clientX; drag.y = e.clientY;
    if (drag.moved > 4) look(dx, dy);
});
canvas.addEventListener('pointerup', (e) => {
    if (!drag) return;
    const wasClick = drag.moved <= 4;
    canvas.releasePointerCapture(drag.id);
    drag = null;
    if (wasClick && document.pointerLockElement !== canvas) {
        const r = canvas.getBoundingClientRect();
        pick(e.clientX - r.left, e.clientY - r.top);
    }
});
canvas.addEventListener('dblclick', () => state.state === 'ready' && canvas.requestPointerLock && canvas.requestPointerLock());
document.addEventListener('mousemove', (e) => {
    if (document.pointerLockElement === canvas) look(e.movementX, e.movementY);
});
function look(dx, dy) {
    flight = null;
    yaw -= dx * 0.004;
    pitch = Math.max(-1.55, Math.min(1.55, pitch - dy * 0.004));
    camera.rotation.set(pitch, yaw, 0, 'YXZ');
}

function move(dt) {
    if (flight) {
        const t = Math.min(1, (performance.now() - flight.start) / flight.duration);
        const s = t * t * (3 - 2 * t);
        setView(flight.from.clone().lerp(flight.to, s), flight.look);
        if (t >= 1) {
            flight = null;
            locateAgain = true;  // locate the end point itself, however close the last located frame was
        }
        return;
    }
    if (!keys.size) return;
    const speed = (keys.has('ShiftLeft') || keys.has('ShiftRight') ? 1200 : 320) * dt;
    const forward = new THREE.Vector3(), right = new THREE.Vector3();
    camera.getWorldDirection(forward);
    right.crossVectors(forward, camera.up).normalize();
    const v = new THREE.Vector3();
    if (keys.has('KeyW') || keys.has('ArrowUp')) v.add(forward);
    if (keys.has('KeyS') || keys.has('ArrowDown')) v.sub(forward);
    if (keys.has('KeyD') || keys.has('ArrowRight')) v.add(right);
    if (keys.has('KeyA') || keys.has('ArrowLeft')) v.sub(right);
    if (keys.has('KeyE') || keys.has('Space')) v.y += 1;
    if (keys.has('KeyQ') || keys.has('ControlLeft') || keys.has('ControlRight') || keys.has('KeyC')) v.y -= 1;
    if (v.lengthSq() > 0) camera.position.addScaledVector(v.normalize(), speed);
}

// ---------------------------------------------------------------- picking
const raycaster = new THREE.Raycaster();
function pick(x, y) {
    if (!root) return null;
    const r = canvas.getBoundingClientRect();
    const ndc = new THREE.Vector2((x / r.width) * 2 - 1, -(y / r.height) * 2 + 1);
    camera.updateMatrixWorld();
    raycaster.setFromCamera(ndc, camera);
    const targets = records.filter((rec) => rec.mesh.visible).map((rec) => rec.mesh);
    if (points && points.visible) targets.push(points);
    const hits = raycaster.intersectObjects(targets, false);
    let found = null;
    for (const h of hits) {
        if (h.object === points) { found = { entity: pointEntities[h.instanceId].index, hit: h }; break; }
        const rec = records.find((rr) => rr.mesh === h.object);
        if (!rec) continue;
        let entity = rec.entity;
        if (entity < 0 && rec.model >= 0) {
            const e = state.entities.find((en) => en.model === rec.model);
            entity = e ? e.index : (rec.model === 0 ? 0 : -1);
        }
        if (entity >= 0) { found = { entity, hit: h }; break; }
    }
    select(found ? found.entity : null);
    return found ? { ...state.selected, distance: found.hit.distance, point: toMap(found.hit.point) } : null;
}

// ---------------------------------------------------------------- PVS
let lastLocated = null;     // the camera position (three.js) last sent to locate()
let locateAgain = false;    // a flight ended: locate even within a unit of the last located point
let locating = false;
async function locateCamera() {
    if (locating || !root || state.state === 'error') return;
    if (!locateAgain && lastLocated && lastLocated.distanceToSquared(camera.position) < 1) return;
    locateAgain = false;
    locating = true;
    const at = camera.position.clone();
    const p = toMap(at);
    const token = loadToken;
    const r = await call({ type: 'locate', x: p[0], y: p[1], z: p[2] });
    locating = false;
    if (token !== loadToken) return;
    lastLocated = at;
    if (r.error) { state.locateError = r.error; return; }
    state.leaf = r.leaf;
    state.cluster = r.cluster;
    state.contents = r.contents;
    if (r.changed) {
        visible = r.visible || null;
        state.hasVisibility = !!visible;
        applyVisibility();
    }
}

// ---------------------------------------------------------------- frame loop
let last = performance.now();
let fpsFrames = 0, fpsStart = last;
function frame(now) {
    // How responsive the page stays while the worker loads: the longest gap between frames.
    if (state.state === 'loading') {
        state.loadingFrames = (state.loadingFrames || 0) + 1;
        state.timing.longestFrameWhileLoading = Math.max(state.timing.longestFrameWhileLoading || 0, now - last);
    }
    const dt = Math.min(0.1, (now - last) / 1000);
    last = now;
    if (root) {
        move(dt);
        camera.updateMatrixWorld();
        locateCamera();
    }
    renderer.render(scene, camera);
    ++state.frames;
    ++fpsFrames;
    if (now - fpsStart >= 1000) {
        state.fps = fpsFrames * 1000 / (now - fpsStart);
        fpsFrames = 0;
        fpsStart = now;
    }
    if (firstFramePending && root) {
        firstFramePending = false;
        if (state.timing.firstFrame === undefined) state.timing.firstFrame = performance.now() - t0;
        $('progress').hidden = true;
        setState('ready');
    }
    if (root) {
        const c = state.cluster >= 0 ? `cluster ${state.cluster}` : (state.leaf >= 0 ? `leaf ${state.leaf}, no cluster` : 'outside');
        $('stats').textContent = `${state.drawnFaces} / ${state.totalFaces} faces · ${c}`
            + `${visible && state.toggles.pvs ? '' : ' (no PVS)'} · ${state.fps ? state.fps.toFixed(0) : "…"} fps`;
    }
    requestAnimationFrame(frame);
}
requestAnimationFrame(frame);

// ---------------------------------------------------------------- open: picker, drop, ?map=
$('file').addEventListener('change', () => {
    const files = [...$('file').files].map((file) => ({ file, path: file.name }));
    if (files.length) openFiles(files);
    $('file').value = '';
});
let dragDepth = 0;
window.addEventListener('dragenter', (e) => { e.preventDefault(); ++dragDepth; $('drop').hidden = false; });
window.addEventListener('dragleave', () => { if (--dragDepth <= 0) { dragDepth = 0; $('drop').hidden = true; } });
window.addEventListener('dragover', (e) => e.preventDefault());
window.addEventListener('drop', async (e) => {
    e.preventDefault();
    dragDepth = 0;
    $('drop').hidden = true;
    if (!e.dataTransfer) return;
    // Folders come through the items' entries; without them (older browsers) the files alone.
    const items = [...(e.dataTransfer.items || [])];
    const files = [...e.dataTransfer.files];
    let entries;
    try {
        entries = items.length && items[0].webkitGetAsEntry ? await droppedEntries(items)
            : files.map((file) => ({ file, path: file.name }));
    } catch (err) {
        entries = files.map((file) => ({ file, path: file.name }));
    }
    if (entries.length) openFiles(entries);
});

// ---------------------------------------------------------------- test / automation interface
function project(position) {
    camera.updateMatrixWorld();
    const v = toThree(position).project(camera);
    if (v.z < -1 || v.z > 1) return null;
    const r = canvas.getBoundingClientRect();
    return [(v.x + 1) / 2 * r.width, (1 - v.y) / 2 * r.height];
}

function coverage() {
    renderer.render(scene, camera);
    const gl = renderer.getContext();
    const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
    const data = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, data);
    const bg = new THREE.Color(BACKGROUND).convertLinearToSRGB();   // the cleared colour as written out
    const br = Math.round(bg.r * 255), bgG = Math.round(bg.g * 255), bb = Math.round(bg.b * 255);
    let other = 0;
    for (let i = 0; i < data.length; i += 4)
        if (Math.abs(data[i] - br) + Math.abs(data[i + 1] - bgG) + Math.abs(data[i + 2] - bb) > 6) ++other;
    return other / (w * h);
}

const settledFrames = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));

window.bspkitViewer = {
    get state() { return state.state; },
    get error() { return state.error; },
    get summary() { return state.summary; },
    get info() { return state.info; },
    get drawnFaces() { return state.drawnFaces; },
    get totalFaces() { return state.totalFaces; },
    get cluster() { return state.cluster; },
    // Faces the camera's cluster can see (ones in locate().visible), of faceBound; null: no PVS.
    get pvs() {
        if (!visible) return null;
        let n = 0;
        for (let i = 0; i < visible.length; ++i) n += visible[i];
        return { visible: n, faceBound: visible.length };
    },
    get leaf() { return state.leaf; },
    get contents() { return state.contents; },
    get selected() { return state.selected; },
    get entities() { return state.entities; },
    get check() { return state.check; },
    get timing() { return state.timing; },
    get fps() { return state.fps; },
    get frames() { return state.frames; },
    get toggles() { return { ...state.toggles }; },
    get camera() { return { position: toMap(camera.position), yaw, pitch }; },
    get start() { return state.start; },
    status: state,
    open: (url, companionUrls = []) => openUrl(url, companionUrls),
    // companions: [{path, bytes: Uint8Array}], the files given with the map
    openBytes: (name, bytes, companions = []) => openBytes(name, bytes, ++loadToken, companions),
    // files: [{name, bytes}] as picked together (the first .bsp is the map); paths may hold folders
    openFiles: (files) => openFiles(files.map((f) => ({ file: new File([f.bytes], f.name.split('/').pop()), path: f.name }))),
    get companions() { return state.companions || []; },
    whenReady: () => (state.state === 'ready' || state.state === 'error')
        ? Promise.resolve(state.state) : new Promise((resolve) => readyWaiters.push(resolve)),
    // Resolves once the camera's position has been located and the culled frame drawn.
    settle: async () => {
        for (let i = 0; i < 200; ++i) {
            await settledFrames();
            if (!locating && !flight && !locateAgain && lastLocated && lastLocated.distanceToSquared(camera.position) < 1) break;
        }
        await settledFrames();
        return { drawnFaces: state.drawnFaces, totalFaces: state.totalFaces, cluster: state.cluster, leaf: state.leaf };
    },
    pick, project, coverage, flyTo, setToggle, select,
    home: () => placeAtStart(),
    screenshot: () => { renderer.render(scene, camera); return canvas.toDataURL('image/png'); },
    setKeys: (codes) => { keys.clear(); for (const c of codes) keys.add(c); },
    look: (dx, dy) => look(dx, dy),
    flyToFinding: (i) => flyToFinding(state.check[i]),
};

// Served by `bspkit serve DIR`: maps/index.json lists the maps; with no ?map the entity panel offers
// them as links (on any other static host the request fails quietly and the page waits for a file).
async function listServedMaps() {
    try {
        const r = await fetch('maps/index.json');
        if (!r.ok) return;
        const { maps } = await r.json();
        if (!Array.isArray(maps) || !maps.length || state.state !== 'idle') return;
        const box = $('entity');
        box.textContent = `${maps.length} map${maps.length === 1 ? '' : 's'} served here (or open / drop a file):`;
        const list = document.createElement('ul');
        list.className = 'maps';
        for (const m of maps) {
            const a = document.createElement('a');
            // With the files the server found the map keeps its textures or coloured light in.
            a.href = '?map=' + encodeURIComponent(m.url)
                + (m.companions || []).map((c) => '&companion=' + encodeURIComponent(c)).join('');
            a.textContent = `${m.path} (${(m.size / 1048576).toFixed(1)} MB)`
                + ((m.companions || []).length ? ` + ${m.companions.map((c) => decodeURIComponent(c.split('/').pop())).join(', ')}` : '');
            const li = document.createElement('li');
            li.appendChild(a);
            list.appendChild(li);
        }
        box.appendChild(list);
    } catch {}
}

const params = new URLSearchParams(location.search);
const mapParam = params.get('map');
if (mapParam) openUrl(mapParam, params.getAll('companion'));
else {
    setState('idle');
    listServedMaps();
}
