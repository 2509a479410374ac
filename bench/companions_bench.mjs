// Files given with a map, timed beside their floors in the same run (medians of RUNS):
//   - the viewer's WebAssembly core (open + scene, node) on a GoldSrc map with a WAD3 made here for its
//     external textures, against the native `bspkit export --wad DIR` of the same map and WAD (the
//     whole process), and against the same core without the WAD;
//   - `bspkit serve DIR` on the corpus folder, start to the printed URL (the catalogue lists the maps
//     and finds each GoldSrc map's WADs), against `find` listing the same tree.
//   node bench/companions_bench.mjs --module SITE/wasm/bspkit_viewer.js --bspkit BIN --corpus DIR [--runs N]
import { createRequire } from 'node:module';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeWad3 } from '../tests/viewer/test_data.mjs';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const k of ['module', 'bspkit', 'corpus'])
  if (!args[k]) { console.error(`usage: --module M.js --bspkit BIN --corpus DIR [--runs N] (missing --${k})`); process.exit(2); }
const runs = Number(args.runs || 9);
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const time = (f) => { const t0 = performance.now(); f(); return performance.now() - t0; };
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bspkit-companions-bench-'));

const rel = 'hl1_v30/hl_undertow.bsp', file = path.join(args.corpus, rel);
if (!fs.existsSync(file)) { console.error(`FAIL: corpus file absent: ${file}`); process.exit(1); }
const native = (argv) => spawnSync(args.bspkit, argv, { encoding: 'utf8', maxBuffer: 1 << 30 });
const empty = fs.mkdtempSync(path.join(tmp, 'empty-'));
const names = JSON.parse(native(['export', file, '-o', path.join(tmp, 'x.glb'), '--wad', empty, '--json']).stdout).missing
  .map((m) => m.material);
const wad = makeWad3(names);
const dir = fs.mkdtempSync(path.join(tmp, 'wads-'));
fs.writeFileSync(path.join(dir, 'halflife.wad'), wad);

const require = createRequire(import.meta.url);
const M = await require(path.resolve(args.module))();
const bytes = new Uint8Array(fs.readFileSync(file));
const core = (companions) => time(() => {
  const info = M.open(file, bytes, null, companions);
  const scene = M.scene();
  if (info.error || scene.error) throw new Error(info.error || scene.error);
  M.close();
});
const withWad = [], without = [], nativeWithWad = [];
for (let r = 0; r < runs; ++r) {
  withWad.push(core([{ path: 'halflife.wad', bytes: new Uint8Array(wad) }]));
  without.push(core(null));
  nativeWithWad.push(time(() => native(['export', file, '-o', path.join(tmp, 'n.glb'), '--wad', dir])));
}
const w = median(withWad), wo = median(without), n = median(nativeWithWad);
console.log(`${rel} (${names.length} textures in a ${(wad.length / 1048576).toFixed(1)} MB WAD), medians of ${runs}:`);
console.log(`  core open+scene with the WAD ${w.toFixed(1)} ms | native export --wad ${n.toFixed(1)} ms | ratio ${(w / n).toFixed(2)}`);
console.log(`  core open+scene with the WAD ${w.toFixed(1)} ms | without it ${wo.toFixed(1)} ms | ratio ${(w / wo).toFixed(2)}`);

// bspkit serve: start to the URL line, against `find` over the same tree.
const toUrl = () => new Promise((done) => {
  const t0 = performance.now();
  const p = spawn(args.bspkit, ['serve', args.corpus, '--port', '0'], { stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, BSPKIT_VIEWER_DIR: path.dirname(path.dirname(path.resolve(args.module))) } });
  let out = '';
  p.stdout.on('data', (c) => { out += c; if (out.includes('\n')) { const ms = performance.now() - t0; p.kill('SIGTERM'); done(ms); } });
  p.on('exit', () => done(NaN));
});
const serve = [], find = [];
for (let r = 0; r < runs; ++r) {
  serve.push(await toUrl());
  find.push(time(() => spawnSync('find', [args.corpus, '-name', '*.bsp', '-o', '-name', '*.wad', '-o', '-name', '*.lit'])));
}
const s = median(serve), f = median(find);
console.log(`bspkit serve ${args.corpus}: start to URL ${s.toFixed(1)} ms | find over the same tree ${f.toFixed(1)} ms | ratio ${(s / f).toFixed(2)}`);
M.close();
fs.rmSync(tmp, { recursive: true, force: true });
