// bspkit viewer worker: owns the WebAssembly core (wasm/bspkit_viewer.js, its
// functions listed in viewer/wasm/bspkit_viewer.cpp) so that parsing, model building and PVS queries
// never block the page. Messages in: {id, type: "open"|"scene"|"locate", ...} (open: name, bytes,
// companions: [{path, bytes}], the files given with the map);
// out: {type: "progress", stage, fraction} while opening, then {id, ok, ...}.
/* global createBspkitViewer, importScripts */
'use strict';

const base = new URL('../wasm/', self.location.href);
let modulePromise = null;
let failure = null;
try {
    importScripts(new URL('bspkit_viewer.js', base).href);
    modulePromise = createBspkitViewer({
        locateFile: (path) => new URL(path, base).href,
        print: () => {},
        printErr: (line) => console.warn('[bspkit wasm]', line),
    });
} catch (e) {
    failure = `cannot load the WebAssembly core (wasm/bspkit_viewer.js): ${e && e.message || e}`;
}

// A copy the page can own: the module's arrays may be views on its memory
// (transferring that buffer would detach the WebAssembly heap).
const own = (a) => (a ? new a.constructor(a) : a);

let lastKey = null;  // the last located cluster (and whether visibility was null)

async function handle(msg) {
    if (failure) return { error: failure };
    const M = await modulePromise;
    const transfer = [];
    switch (msg.type) {
    case 'open': {
        lastKey = null;
        const t0 = performance.now();
        if (typeof M.close === 'function') M.close();   // one map per Module: free the previous one
        let lastPost = 0;
        const info = M.open(msg.name, msg.bytes, (stage, fraction) => {
            const now = performance.now();
            if (now - lastPost > 30 || fraction >= 1) {
                lastPost = now;
                self.postMessage({ type: 'progress', stage: String(stage), fraction: Number(fraction) });
            }
        }, msg.companions || null);
        if (!info || info.error) return { error: info ? info.error : `${msg.name}: open returned nothing` };
        const tOpen = performance.now();
        const entities = M.entities();
        const check = M.check();
        const scene = sceneOf(M, msg.options || {}, transfer);
        if (scene.error) return scene;
        return { info, entities: Array.isArray(entities) ? entities : [], check: Array.isArray(check) ? check : [],
                 scene, timing: { open: tOpen - t0, scene: performance.now() - tOpen }, transfer };
    }
    case 'scene': {
        const scene = sceneOf(M, msg.options || {}, transfer);
        if (scene.error) return scene;
        return { scene, transfer };
    }
    case 'locate': {
        const r = M.locate(msg.x, msg.y, msg.z);
        if (!r || r.error) return { error: r ? r.error : 'locate returned nothing' };
        const key = `${r.cluster}:${r.visible ? 1 : 0}:${r.leaf}`;
        const changed = key !== lastKey;
        lastKey = key;
        const out = { leaf: r.leaf, cluster: r.cluster, area: r.area, contents: r.contents, changed, transfer };
        if (changed) {
            out.visible = r.visible ? own(r.visible) : null;
            if (out.visible) transfer.push(out.visible.buffer);
        }
        return out;
    }
    default:
        return { error: `unknown request ${msg.type}` };
    }
}

function sceneOf(M, options, transfer) {
    const s = M.scene(options);
    if (!s || s.error) return { error: s ? s.error : 'scene returned nothing' };
    const glb = own(s.glb);
    transfer.push(glb.buffer);
    const ranges = (s.ranges || []).map((r) => {
        const face = own(r.face), first = own(r.first), count = own(r.count);
        transfer.push(face.buffer, first.buffer, count.buffer);
        return { mesh: r.mesh, primitive: r.primitive, face, first, count };
    });
    let lightmap = null;
    if (s.lightmap) {
        const pixels = own(s.lightmap.pixels);
        transfer.push(pixels.buffer);
        lightmap = { width: s.lightmap.width, height: s.lightmap.height, pixels };
    }
    return { glb, summary: s.summary, faceBound: s.faceBound, ranges, lightmap, options };
}

self.onmessage = async (e) => {
    const msg = e.data;
    let reply;
    try {
        reply = await handle(msg);
    } catch (err) {
        reply = { error: `viewer worker: ${err && err.message || err}` };
    }
    const transfer = reply.transfer || [];
    delete reply.transfer;
    // The same buffer listed twice (or a detached one) would make postMessage throw.
    const unique = [...new Set(transfer)].filter((b) => b && b.byteLength !== undefined);
    self.postMessage({ id: msg.id, ...reply }, unique);
};
