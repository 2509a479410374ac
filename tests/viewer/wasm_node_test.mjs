// ctest viewer_wasm_node: the browser viewer's WebAssembly module (build/viewer/site/wasm/bspkit_viewer.js,
// `make viewer`) against the native command line, one corpus map per family:
//   open ok; scene().glb byte-identical to `bspkit export FILE -o x.glb` and summary = its --json;
//   ranges cover every index of every primitive exactly once; locate() at the player start = `bspkit leaf
//   --json`; entities() count = `bspkit entities --json`; check() lines = `bspkit check` stdout; a truncated
//   map and a garbage file give {error} = the CLI's stderr line. Companion files (open()'s 4th argument):
//   a GoldSrc map with a WAD3 made here for its external textures gives the glb of `bspkit export --wad DIR
//   --game-dir DIR` and no missing texture; a Quake 1 map with a .lit made here gives the glb of the export
//   with that .lit beside the map; a Quake 3 map with a pk3 made here gives the glb of `--game-dir DIR`, a
//   Quake 2 map with loose TGAs under baseq2/textures/ the glb of `--game-dir DIR/baseq2`;
//   paths that leave the folder are refused, a .lit of another name unused.
// node wasm_node_test.mjs --module M.js --bspkit BIN --corpus DIR [--time RELPATH]
//   --time: also prints open+scene time in node vs native export of that map (information only).
import { createRequire } from 'node:module';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeTga, makeWad3, makeZip } from './test_data.mjs';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const k of ['module', 'bspkit', 'corpus'])
  if (!args[k]) { console.error(`usage: --module M.js --bspkit BIN --corpus DIR (missing --${k})`); process.exit(2); }
if (!fs.existsSync(args.module)) { console.error(`FAIL: no module ${args.module} (make viewer)`); process.exit(1); }

const MAPS = ['q1_v29/pd_change_dest.bsp', 'q1_bsp2/bevytb_example_q1_lit.bsp', 'hl1_v30/hl_undertow.bsp',
  'q2_v38/q2_base1.bsp', 'q3_v46/oa_oacmpctf3.bsp', 'nightfire_v42/nf_weapon_accuracy_nf.bsp',
  'src_v20/sdk2013_boxinaroom.bsp', 'src_v20_lzma/sdk2013_boxinaroom_lzma.bsp', 'src_console/x360_shack.bsp'];

let failures = 0;
const fail = (what) => { failures++; console.error(`FAIL: ${what}`); };
const expect = (cond, what) => { if (!cond) fail(what); return cond; };
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bspkit-wasm-'));

const require = createRequire(import.meta.url);
const createBspkitViewer = require(path.resolve(args.module));
const M = await createBspkitViewer();

function native(argv) {
  const r = spawnSync(args.bspkit, argv, { encoding: 'buffer', maxBuffer: 1 << 30 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
}
const lines = (text) => text.split('\n').filter((l) => l.length > 0);
const glbJson = (glb) => {
  const dv = new DataView(glb.buffer, glb.byteOffset, glb.byteLength);
  const length = dv.getUint32(12, true);
  return JSON.parse(Buffer.from(glb.subarray(20, 20 + length)).toString('utf8'));
};

function testMap(rel) {
  const file = path.join(args.corpus, rel);
  if (!fs.existsSync(file)) { fail(`${rel}: corpus file absent (${file})`); return; }
  const bytes = new Uint8Array(fs.readFileSync(file));
  const stages = [];
  const info = M.open(file, bytes, (stage) => stages.push(stage));
  if (!expect(!info.error, `${rel}: open: ${info.error}`)) return;
  expect(stages.includes('parsing') && stages.includes('model'), `${rel}: progress stages ${stages}`);
  expect(info.bytes === bytes.length, `${rel}: open().bytes ${info.bytes} != ${bytes.length}`);

  // scene() = bspkit export
  const out = path.join(tmp, 'x.glb');
  const ex = native(['export', file, '-o', out, '--json']);
  if (!expect(ex.status === 0, `${rel}: native export failed: ${ex.stderr}`)) return;
  const summary = JSON.parse(ex.stdout);
  const scene = M.scene();
  if (!expect(!scene.error, `${rel}: scene: ${scene.error}`)) return;
  const nativeGlb = fs.readFileSync(out);
  expect(Buffer.compare(Buffer.from(scene.glb), nativeGlb) === 0,
    `${rel}: scene().glb (${scene.glb.length} bytes) differs from bspkit export (${nativeGlb.length} bytes)`);
  for (const k of ['models', 'primitives', 'vertices', 'triangles', 'materials', 'images', 'skipped_surfaces', 'skipped_models'])
    expect(scene.summary[k] === summary[k], `${rel}: summary.${k} ${scene.summary[k]} != export --json ${summary[k]}`);

  // ranges: one per primitive, contiguous, covering its index accessor exactly once
  const gltf = glbJson(scene.glb);
  const seen = new Set();
  let maxFace = 0;
  for (const r of scene.ranges) {
    const prim = gltf.meshes?.[r.mesh]?.primitives?.[r.primitive];
    if (!expect(prim, `${rel}: range names mesh ${r.mesh} primitive ${r.primitive}, not in the glb`)) continue;
    seen.add(`${r.mesh}/${r.primitive}`);
    const count = gltf.accessors[prim.indices].count;
    let at = 0;
    for (let i = 0; i < r.first.length; i++) {
      if (!expect(r.first[i] === at, `${rel}: mesh ${r.mesh} prim ${r.primitive} surface ${i} starts at ${r.first[i]}, expected ${at}`)) break;
      at += r.count[i];
      if (r.face[i] !== 0xFFFFFFFF) maxFace = Math.max(maxFace, r.face[i] + 1);
    }
    expect(at === count, `${rel}: mesh ${r.mesh} prim ${r.primitive}: ranges cover ${at} of ${count} indices`);
  }
  const primitives = (gltf.meshes ?? []).reduce((n, m) => n + m.primitives.length, 0);
  expect(seen.size === primitives && scene.ranges.length === primitives,
    `${rel}: ${scene.ranges.length} ranges for ${primitives} primitives`);
  expect(scene.faceBound === maxFace, `${rel}: faceBound ${scene.faceBound} != ${maxFace}`);

  // entities() = bspkit entities --json
  const ents = M.entities();
  const nativeEnts = JSON.parse(native(['entities', file, '--json']).stdout);
  expect(Array.isArray(ents) && ents.length === nativeEnts.length, `${rel}: entities ${ents.length} != ${nativeEnts.length}`);

  // locate() at the player start = bspkit leaf --json
  const start = ents.find((e) => e.classname === 'info_player_start' && e.origin) ??
                ents.find((e) => e.classname.startsWith('info_player') && e.origin);
  if (expect(start, `${rel}: no player start entity with an origin`)) {
    const [x, y, z] = start.origin;
    const here = M.locate(x, y, z);
    const leaf = JSON.parse(native(['leaf', file, String(x), String(y), String(z), '--json']).stdout);
    expect(!here.error && here.leaf === leaf.leaf && here.cluster === (leaf.cluster ?? -1) && here.area === (leaf.area ?? -1),
      `${rel}: locate(${x} ${y} ${z}) = leaf ${here.leaf} cluster ${here.cluster} area ${here.area}, bspkit leaf: ${leaf.leaf} ${leaf.cluster} ${leaf.area}`);
    expect(here.contents.join(',') === leaf.contents.flags, `${rel}: contents ${here.contents} != ${leaf.contents.flags}`);
    if (info.hasVis && here.cluster >= 0 && here.visible) {
      expect(here.visible.length === scene.faceBound || here.visible.length >= scene.faceBound,
        `${rel}: visible has ${here.visible.length} entries, faceBound ${scene.faceBound}`);
      expect(here.visible.some((v) => v === 0) || true, '');
    }
    console.log(`${rel}: player start (${x} ${y} ${z}) leaf ${here.leaf} cluster ${here.cluster}, ` +
      `${here.visible ? here.visible.reduce((a, b) => a + b, 0) + '/' + here.visible.length + ' faces visible' : 'no PVS'}`);
  }

  // check() lines = bspkit check stdout (its last line is the summary, not a finding)
  const findings = M.check();
  const nativeCheck = lines(native(['check', file]).stdout);
  const ours = [];
  for (const f of findings) if (ours[ours.length - 1] !== f.line && !ours.includes(f.line)) ours.push(f.line);
  expect(Array.isArray(findings) && JSON.stringify(ours) === JSON.stringify(nativeCheck.slice(0, -1)),
    `${rel}: check() lines differ from bspkit check:\n  ours:   ${ours.slice(0, 5).join('\n          ')}\n  native: ${nativeCheck.slice(0, 5).join('\n          ')}`);
  M.close();
  console.log(`${rel}: ok (${scene.glb.length} byte glb, ${scene.ranges.length} primitives, ${ents.length} entities, ${findings.length} findings)`);
}

function testDamaged(name, bytes) {
  fs.writeFileSync(name, bytes);
  const r = native(['export', name, '-o', path.join(tmp, 'damaged.glb')]);
  const nativeLine = lines(r.stderr).pop();
  const ours = M.open(name, new Uint8Array(bytes));
  expect(r.status === 1, `${name}: native export exit ${r.status}`);
  expect(ours.error === nativeLine, `${path.basename(name)}: open() = ${JSON.stringify(ours)}, bspkit export: ${nativeLine}`);
  console.log(`${path.basename(name)}: {error: ${ours.error}}`);
  M.close();
}

for (const rel of MAPS) {
  try { testMap(rel); } catch (e) { fail(`${rel}: ${e.stack}`); }
}
// The materials `bspkit export --json` lists as missing for `file` when `flag` (--wad / --game-dir)
// names an empty folder.
function missingWithNothingGiven(file, flag) {
  const empty = fs.mkdtempSync(path.join(tmp, 'empty-'));
  const r = native(['export', file, '-o', path.join(tmp, 'missing.glb'), flag, empty, '--json']);
  return r.status === 0 ? JSON.parse(r.stdout).missing.map((m) => m.material) : [];
}

// open(file) with `companions` against `bspkit export file <searchArgs>`: the export finds every one of
// `names`, the core finds them too, and scene().glb is the export's bytes. `exact`: nothing at all is
// missing on either side and the core found exactly `names`. Returns the export's glb (null on failure).
function expectCompanionsGiveTheExport(rel, file, companions, searchArgs, names, exact, what) {
  const out = path.join(tmp, 'companions.glb');
  const ex = native(['export', file, '-o', out, ...searchArgs, '--json']);
  const nativeMissing = ex.status === 0 ? JSON.parse(ex.stdout).missing.map((m) => m.material) : null;
  if (!expect(nativeMissing && names.every((n) => !nativeMissing.includes(n)) && (!exact || nativeMissing.length === 0),
    `${rel}: native export with ${what} failed or misses textures: ${nativeMissing ?? ex.stderr}`)) return null;
  const expected = fs.readFileSync(out);
  const info = M.open(file, new Uint8Array(fs.readFileSync(file)), null, companions);
  if (!expect(!info.error, `${rel}: open with ${what}: ${info.error}`)) return null;
  const t = info.textures;
  expect(t.searched && (exact ? t.found === names.length && t.missing.length === 0
                              : t.found >= names.length && t.missing.every((m) => !names.includes(m.material))),
    `${rel}: with ${what}: searched ${t.searched}, found ${t.found} of ${names.length}, missing ${t.missing.length}`);
  const scene = M.scene();
  expect(!scene.error && Buffer.compare(Buffer.from(scene.glb), expected) === 0,
    `${rel}: scene().glb with ${what} (${scene.glb?.length} bytes) differs from bspkit export ${searchArgs.join(' ')} (${expected.length} bytes)`);
  M.close();
  return expected;
}

function testCompanions() {
  const rel = 'hl1_v30/hl_undertow.bsp', file = path.join(args.corpus, rel);
  if (!expect(fs.existsSync(file), `${rel}: corpus file absent (${file})`)) return;
  const bytes = new Uint8Array(fs.readFileSync(file));
  const names = missingWithNothingGiven(file, '--wad');
  if (!expect(names.length > 10, `${rel}: expected textures kept in WADs, export --json lists ${names.length} missing`)) return;
  const wad = makeWad3(names);
  const dir = fs.mkdtempSync(path.join(tmp, 'wads-'));
  fs.writeFileSync(path.join(dir, 'halflife.wad'), wad);
  if (!expectCompanionsGiveTheExport(rel, file, [{ path: 'halflife.wad', bytes: new Uint8Array(wad) }],
    ['--wad', dir, '--game-dir', dir], names, true, 'halflife.wad')) return;

  // No companions: no search, as export without --wad. A WAD of another name is searched (as a folder's
  // other WADs are) ... so give none that holds the textures: the missing list is the export's.
  const plain = M.open(file, bytes);
  expect(!plain.error && !plain.textures.searched && plain.textures.missing.length === 0, `${rel}: open without companions searched`);
  M.close();
  const other = M.open(file, bytes, null, [{ path: 'notes/readme.txt', bytes: new Uint8Array([104, 105]) }]);
  expect(!other.error && other.textures.searched && other.textures.missing.length === names.length &&
    other.textures.missing.every((m, i) => m.material === names[i]),
    `${rel}: with no WAD: ${other.textures?.missing?.length} missing, expected the export's ${names.length}`);
  M.close();

  // Paths that leave the folder are refused (not written), with a warning; the map still opens.
  const hostile = M.open(file, bytes, null, [
    { path: '../halflife.wad', bytes: new Uint8Array(wad) }, { path: 'a/../../halflife.wad', bytes: new Uint8Array(wad) },
    { path: '/valve/halflife.wad', bytes: new Uint8Array(wad) }]);
  expect(!hostile.error, `${rel}: open with hostile paths: ${hostile.error}`);
  const refused = (hostile.textures?.warnings ?? []).filter((w) => w.includes('leaves the folder'));
  expect(refused.length === 2, `${rel}: ${refused.length} of 2 paths with '..' refused: ${JSON.stringify(hostile.textures?.warnings)}`);
  // '/valve/halflife.wad' (a dropped folder's entry) is valve/halflife.wad inside the folder: used.
  expect(hostile.textures?.missing?.length === 0, `${rel}: the WAD at /valve/halflife.wad was not used`);
  M.close();
  console.log(`${rel}: companions ok (${names.length} textures from a WAD, glb = export --wad; '..' refused)`);
}

// A Quake 3 map with a pk3 made here (a TGA per texture the map names): the glb of `bspkit export
// --game-dir DIR` with that pk3 in DIR; the pk3 is read by the core's own ZIP reader in WebAssembly.
function testPk3() {
  const rel = 'q3_v46/oa_ctf2.bsp', file = path.join(args.corpus, rel);
  if (!expect(fs.existsSync(file), `${rel}: corpus file absent (${file})`)) return;
  const names = missingWithNothingGiven(file, '--game-dir').filter((n) => n.startsWith('textures/'));
  if (!expect(names.length > 5, `${rel}: expected textures outside the map, export --json lists ${names.length}`)) return;
  const pk3 = makeZip(names.map((n, i) => ({
    name: `${n}.tga`, bytes: makeTga(16, 16, (x, y) => ((x >> 2) ^ (y >> 2)) & 1 ? [i * 37 & 255, 200, 90] : [40, i * 53 & 255, 160]) })));
  const dir = fs.mkdtempSync(path.join(tmp, 'q3-game-'));
  fs.writeFileSync(path.join(dir, 'zz_made.pk3'), pk3);
  if (expectCompanionsGiveTheExport(rel, file, [{ path: 'baseq3/zz_made.pk3', bytes: new Uint8Array(pk3) }],
    ['--game-dir', dir], names, false, 'the pk3'))
    console.log(`${rel}: pk3 companion ok (${names.length} textures from a pk3, glb = export --game-dir)`);
}

// A Quake 2 map with loose TGAs in a game folder (baseq2/textures/<name>.tga): the folder above
// textures/ is searched as `bspkit export --game-dir DIR/baseq2` searches it.
function testQuake2Folder() {
  const rel = 'q2_v38/mission64_titlemap.bsp', file = path.join(args.corpus, rel);
  if (!expect(fs.existsSync(file), `${rel}: corpus file absent (${file})`)) return;
  const names = missingWithNothingGiven(file, '--game-dir');
  if (!expect(names.length > 0, `${rel}: expected textures outside the map`)) return;
  const dir = fs.mkdtempSync(path.join(tmp, 'q2-game-'));
  const companions = names.map((n, i) => {
    const bytes = makeTga(8, 8, (x, y) => (x + y) & 1 ? [200, i * 71 & 255, 40] : [30, 90, i * 29 & 255]);
    const where = path.join(dir, 'baseq2', 'textures', `${n}.tga`);
    fs.mkdirSync(path.dirname(where), { recursive: true });
    fs.writeFileSync(where, bytes);
    return { path: `baseq2/textures/${n}.tga`, bytes: new Uint8Array(bytes) };
  });
  if (expectCompanionsGiveTheExport(rel, file, companions, ['--game-dir', path.join(dir, 'baseq2')], names, true,
    'baseq2/textures'))
    console.log(`${rel}: game folder companion ok (${names.length} loose textures under baseq2/textures/, glb = export --game-dir)`);
}

// A Quake 1 map with a .lit (QLIT 1) made here: the glb of the export with that .lit beside the map.
function testLit() {
  const rel = 'q1_v29/pd_change_dest.bsp', file = path.join(args.corpus, rel);
  if (!expect(fs.existsSync(file), `${rel}: corpus file absent (${file})`)) return;
  const b = fs.readFileSync(file);
  const lightingLength = b.readInt32LE(4 + 8 * 8 + 4);  // lump 8 (lighting): offset, length
  const lit = Buffer.alloc(8 + 3 * lightingLength);
  lit.write('QLIT', 0, 'latin1');
  lit.writeInt32LE(1, 4);
  const lightingAt = b.readInt32LE(4 + 8 * 8);
  for (let i = 0; i < lightingLength; i++) {
    const v = b[lightingAt + i];
    lit[8 + 3 * i] = v; lit[9 + 3 * i] = (v * 3) >> 2; lit[10 + 3 * i] = v >> 1;  // warm light
  }
  const dir = fs.mkdtempSync(path.join(tmp, 'lit-'));
  const copy = path.join(dir, 'pd_change_dest.bsp');
  fs.writeFileSync(copy, b);
  const out = path.join(tmp, 'lit.glb');
  const plain = native(['export', copy, '-o', out]);
  const without = fs.readFileSync(out);
  fs.writeFileSync(path.join(dir, 'pd_change_dest.lit'), lit);
  const ex = native(['export', copy, '-o', out]);
  if (!expect(plain.status === 0 && ex.status === 0, `${rel}: native export with a .lit failed: ${ex.stderr}`)) return;
  const withLit = fs.readFileSync(out);
  expect(Buffer.compare(without, withLit) !== 0, `${rel}: the .lit changed nothing in the native glb`);
  const info = M.open(copy, new Uint8Array(b), null, [{ path: 'maps/PD_CHANGE_DEST.LIT', bytes: new Uint8Array(lit) }]);
  const scene = !info.error && M.scene();
  expect(scene && !scene.error && Buffer.compare(Buffer.from(scene.glb), withLit) === 0,
    `${rel}: scene().glb with the .lit differs from the export with the .lit beside the map (${info.error ?? scene.error ?? ''})`);
  M.close();
  const wrong = M.open(copy, new Uint8Array(b), null, [{ path: 'other.lit', bytes: new Uint8Array(lit) }]);
  const wrongScene = !wrong.error && M.scene();
  expect(wrongScene && Buffer.compare(Buffer.from(wrongScene.glb), without) === 0 &&
    wrong.textures.warnings.some((w) => w.startsWith('other.lit: not used')),
    `${rel}: a .lit of another name was used or not reported: ${JSON.stringify(wrong.textures?.warnings)}`);
  M.close();
  console.log(`${rel}: .lit companion ok (glb = export with the .lit beside the map)`);
}
try { testCompanions(); } catch (e) { fail(`companions: ${e.stack}`); }
try { testLit(); } catch (e) { fail(`.lit: ${e.stack}`); }
try { testPk3(); } catch (e) { fail(`pk3: ${e.stack}`); }
try { testQuake2Folder(); } catch (e) { fail(`Quake 2 folder: ${e.stack}`); }

// A truncated map (a lump runs past the end) and garbage.
const whole = path.join(args.corpus, MAPS[0]);
if (expect(fs.existsSync(whole), `corpus file absent: ${whole}`)) {
  const b = fs.readFileSync(whole);
  testDamaged(path.join(tmp, 'truncated.bsp'), b.subarray(0, Math.floor(b.length / 2)));
}
const garbage = Buffer.alloc(4096);
for (let i = 0, s = 12345; i < garbage.length; i++) garbage[i] = (s = (s * 1103515245 + 12345) >>> 0) >>> 24;
testDamaged(path.join(tmp, 'garbage.bsp'), garbage);
// Functions with no map open return {error}, never throw.
expect(M.scene().error && M.locate(0, 0, 0).error && M.check().error, 'no map open: {error} expected');
expect(M.open('x.bsp', 'not bytes').error, 'open with no bytes: {error} expected');

if (args.time) {
  const file = path.join(args.corpus, args.time);
  if (expect(fs.existsSync(file), `corpus file absent: ${file}`)) {
    const bytes = new Uint8Array(fs.readFileSync(file));
    const t0 = performance.now();
    const info = M.open(file, bytes);
    const t1 = performance.now();
    const scene = M.scene();
    const t2 = performance.now();
    const n0 = performance.now();
    execFileSync(args.bspkit, ['export', file, '-o', path.join(tmp, 'time.glb')], { stdio: 'ignore' });
    const n1 = performance.now();
    console.log(`time ${args.time}: wasm open ${(t1 - t0).toFixed(0)} ms + scene ${(t2 - t1).toFixed(0)} ms = ` +
      `${(t2 - t0).toFixed(0)} ms (${info.error ?? scene.error ?? scene.glb.length + ' byte glb'}); native bspkit export ` +
      `${(n1 - n0).toFixed(0)} ms; wasm heap ${M.HEAPU8 ? (M.HEAPU8.length / 1048576).toFixed(0) + " MiB" : "?"}`);
    M.close();
  }
}
fs.rmSync(tmp, { recursive: true, force: true });
if (failures) { console.error(`${failures} failure(s)`); process.exit(1); }
console.log('viewer_wasm_node: all checks passed');
