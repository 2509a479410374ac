// Viewer benchmark: for the largest corpus map of each family, the time from
// asking the page for the map (?map=URL: fetch, parse and model building in the
// WebAssembly worker, glTF parse, upload) to its first drawn frame, against the
// native `bspkit export FILE -o x.glb` of the same map in the same run (ratio),
// then frames per second while flying (forward + turning) for a few seconds.
// Headless Chromium renders with SwiftShader (CPU): the frame rates are a floor,
// a GPU does far better.
//
//   node bench/viewer_bench.mjs --site build/viewer/site --corpus DIR --bspkit PATH [--fly-seconds N] [--chromium PATH]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, serve } from '../tests/viewer/cdp.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : fallback;
};
const site = opt('--site'), corpus = opt('--corpus'), bspkit = opt('--bspkit');
const flySeconds = Number(opt('--fly-seconds', '4'));
const chromium = opt('--chromium', '/usr/bin/chromium');
if (!site || !corpus || !bspkit) {
    console.error('usage: node bench/viewer_bench.mjs --site DIR --corpus DIR --bspkit PATH [--fly-seconds N]');
    process.exit(2);
}
if (!existsSync(join(site, 'wasm', 'bspkit_viewer.wasm'))) {
    console.error(`${site}: the viewer site is not built (make viewer)`);
    process.exit(1);
}

// The largest map of each family in the corpus (by file size, MANIFEST.tsv).
const MAPS = [
    ['quake1', 'q1_v29/pd_change_dest.bsp'],
    ['bsp2', 'q1_bsp2/bevytb_example_q1_lit.bsp'],
    ['goldsrc', 'hl1_v30/cs16_de_torabora.bsp'],
    ['quake2', 'q2_v38/librequake_lq_e0m2_quake2.bsp'],
    ['quake3', 'q3_v46/nexuiz_ons-reborn.bsp'],
    ['rtcw', 'q3_ibsp47/rtcw_testroom.bsp'],
    ['nightfire', 'nightfire_v42/nf_weapon_accuracy_nf.bsp'],
    ['source v17', 'src_v17/vtmb_ch_temple_3.bsp'],
    ['source', 'src_v21/l4d2_escapefromterrortown01.bsp'],
    ['source console', 'src_console/x360_shack.bsp'],
];

const { server, port } = await serve({ '/': site, '/corpus/': corpus });
const browser = await launch({ chromium, width: 1280, height: 800 });
const { page } = browser;
const rows = [];
try {
    for (const [family, rel] of MAPS) {
        const file = join(corpus, rel);
        if (!existsSync(file)) { console.log(`${family}: ${rel} missing`); continue; }
        // Native: the same work (parse + model + glb), written to a temporary file.
        const out = mkdtempSync(join(tmpdir(), 'bspkit-bench-'));
        const n0 = process.hrtime.bigint();
        const native = spawnSync(bspkit, ['export', file, '-o', join(out, 'x.glb')], { encoding: 'utf8' });
        const nativeMs = Number(process.hrtime.bigint() - n0) / 1e6;
        rmSync(out, { recursive: true, force: true });
        await page.goto(`http://127.0.0.1:${port}/index.html?map=${encodeURIComponent('corpus/' + rel)}`);
        for (let i = 0; i < 100 && !(await page.eval('!!window.bspkitViewer')); ++i) await new Promise((ok) => setTimeout(ok, 100));
        const status = await page.eval('window.bspkitViewer.whenReady()', 900000);
        if (status !== 'ready') {
            console.log(`${family}: ${rel}: ${await page.eval('window.bspkitViewer.error')}`);
            continue;
        }
        const t = await page.eval('window.bspkitViewer.timing');
        const summary = await page.eval('window.bspkitViewer.summary');
        await page.eval('window.bspkitViewer.settle()');
        // Fly: forward with a slow turn, every frame drawn (PVS updates included).
        const fly = await page.eval(`(async () => {
            const v = window.bspkitViewer, f0 = v.frames, t0 = performance.now();
            v.setKeys(['KeyW']);
            while (performance.now() - t0 < ${flySeconds * 1000}) {
                await new Promise((r) => requestAnimationFrame(r));
                v.look(3, 0);
            }
            v.setKeys([]);
            return {frames: v.frames - f0, ms: performance.now() - t0, drawn: v.drawnFaces, total: v.totalFaces};
        })()`, flySeconds * 1000 + 120000);
        const row = {
            family, map: rel, triangles: summary.triangles,
            firstFrameMs: Math.round(t.firstFrame), coreMs: Math.round(t.open + t.scene), nativeExportMs: Math.round(nativeMs),
            ratio: +(t.firstFrame / nativeMs).toFixed(2), nativeStatus: native.status,
            fps: +(fly.frames * 1000 / fly.ms).toFixed(1), facesDrawnAtEnd: `${fly.drawn}/${fly.total}`,
        };
        rows.push(row);
        console.log(JSON.stringify(row));
    }
} finally {
    await browser.close();
    server.close();
}
console.log('\nfamily           map                                        triangles  first frame  (core)   native export  ratio  fps (SwiftShader: a floor)');
for (const r of rows)
    console.log(`${r.family.padEnd(16)} ${r.map.padEnd(42)} ${String(r.triangles).padStart(9)}  ${String(r.firstFrameMs).padStart(8)} ms  ${String(r.coreMs).padStart(6)}   ${String(r.nativeExportMs).padStart(8)} ms  ${String(r.ratio).padStart(6)}  ${r.fps}`);
process.exit(0);
