// The viewer (build/viewer/site: viewer/web + the WebAssembly core + three.js)
// in headless Chromium with SwiftShader, driven through window.bspkitViewer over
// the DevTools protocol (tests/viewer/cdp.mjs). For a map of each family it
// checks what a user sees against the native command line:
//   - the page reaches "ready" from ?map=URL; the WebAssembly model's triangle
//     and material counts equal `bspkit export FILE -o x.glb --json`;
//   - the canvas shows the map from the player start (non-background pixels);
//   - PVS: inside a map with visibility, fewer faces are drawn than the total;
//   - picking at a point entity's projected position selects it and the side
//     panel shows its classname;
// that files given with a map (picked together, a dropped folder, ?companion=URL, the WADs `bspkit
// serve` finds for it) bring its textures kept in WADs (the counts of `bspkit export --wad DIR
// --game-dir DIR --json`, the Textures panel), and that damaged files show the CLI's one-line error.
// Screenshots of the whole page go to ARTEFACTS (look at them).
//
//   node browser_test.mjs --site DIR --corpus DIR --bspkit PATH --artefacts DIR [--chromium PATH]
// Exit 0 when every check passes, 1 otherwise (a missing site or corpus file fails).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { launch, serve } from './cdp.mjs';
import { makeWad3 } from './test_data.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : fallback;
};
const site = opt('--site'), corpus = opt('--corpus'), bspkit = opt('--bspkit') && resolve(opt('--bspkit')), artefacts = opt('--artefacts');
const chromium = opt('--chromium', '/usr/bin/chromium');
const only = opt('--only', null);
if (!site || !corpus || !bspkit || !artefacts) {
    console.error('usage: node browser_test.mjs --site DIR --corpus DIR --bspkit PATH --artefacts DIR [--chromium PATH]');
    process.exit(2);
}
for (const f of ['index.html', 'js/main.js', 'js/worker.js', 'wasm/bspkit_viewer.js', 'wasm/bspkit_viewer.wasm',
                 'three/build/three.module.js']) {
    if (!existsSync(join(site, f))) {
        console.error(`FAIL: the viewer site is not built: ${join(site, f)} is missing (run \`make viewer\`)`);
        process.exit(1);
    }
}
mkdirSync(artefacts, { recursive: true });

const CASES = [
    { family: 'quake1', rel: 'q1_v29/pd_change_dest.bsp' },
    { family: 'goldsrc', rel: 'hl1_v30/hl_undertow.bsp', drop: true },  // dropped on the page
    { family: 'quake2', rel: 'q2_v38/q2_base1.bsp' },
    { family: 'quake3', rel: 'q3_v46/oa_oacmpctf3.bsp' },
    { family: 'source', rel: 'src_v20/sdk2013_boxinaroom.bsp', picker: true },  // opened with the file picker
    // GoldSrc again: `bspkit check` warns about face 688's extents, a finding with a position to fly to.
    { family: 'svencoop', rel: 'hl1_v30/svencoop_q2dm1.bsp', finding: true },
].filter((c) => !only || only.split(',').includes(c.family));

let failures = 0;
const results = [];
const check = (ok, what, detail = '') => {
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${detail ? ': ' + detail : ''}`);
    if (!ok) ++failures;
    return ok;
};

// The native export's counts, and the one-line error the CLI prints for a bad file.
const nativeExport = (file, cwd, extra = []) => {
    const out = mkdtempSync(join(tmpdir(), 'bspkit-viewer-native-'));
    const r = spawnSync(bspkit, ['export', file, '-o', join(out, 'x.glb'), '--json', ...extra], { cwd, encoding: 'utf8' });
    rmSync(out, { recursive: true, force: true });
    const lines = r.stderr.split('\n').filter((l) => l.trim());
    return { status: r.status, json: r.status === 0 ? JSON.parse(r.stdout) : null, lastLine: lines[lines.length - 1] || '' };
};

const bad = mkdtempSync(join(tmpdir(), 'bspkit-viewer-bad-'));
const given = mkdtempSync(join(tmpdir(), 'bspkit-viewer-companions-'));  // a WAD made here, in a game folder
const { server, port } = await serve({ '/': site, '/corpus/': corpus, '/bad/': bad, '/given/': given });
const base = `http://127.0.0.1:${port}/`;
const browser = await launch({ chromium, width: 1280, height: 800 });
const { page } = browser;

// Goes to `url` and waits until the page's script is up: at most 60 s (a
// loaded 2-core machine running the rest of the suite can take over 10).
async function gotoPage(url) {
    await page.goto(url);
    for (let i = 0; i < 600 && !(await page.eval('!!window.bspkitViewer')); ++i) await new Promise((ok) => setTimeout(ok, 100));
    if (!(await page.eval('!!window.bspkitViewer'))) throw new Error(`${url}: the viewer's script was not up after 60 s`);
}

// Opens a map with ?map=URL, or (picker: a local path) with the page's file picker.
async function openPage(mapUrl, picker = null, how = 'picker') {
    await gotoPage(picker ? `${base}index.html` : `${base}index.html?map=${encodeURIComponent(mapUrl)}`);
    if (picker) {
        if ((await page.eval('window.bspkitViewer.state')) !== 'idle') throw new Error('the page without ?map= is not idle');
        const files = Array.isArray(picker) ? picker : [picker];
        if (how === 'drop') await page.dropFiles(400, 300, files);
        else await page.setFiles('#file', files);
        for (let i = 0; i < 600 && (await page.eval('window.bspkitViewer.state')) === 'idle'; ++i)
            await new Promise((ok) => setTimeout(ok, 100));
    }
    return page.eval('window.bspkitViewer.whenReady()', 600000);
}
const shot = async (name) => {
    const file = join(artefacts, name);
    writeFileSync(file, await page.screenshot());
    return file;
};

try {
    for (const c of CASES) {
        const file = join(corpus, c.rel);
        if (!check(existsSync(file), `${c.family}: corpus file ${file} present`)) continue;
        const native = nativeExport(file);
        const r = { family: c.family, map: c.rel };
        results.push(r);
        const started = Date.now();
        const status = await openPage(`corpus/${c.rel}`, c.picker || c.drop ? file : null, c.drop ? 'drop' : 'picker');
        r.loadSeconds = (Date.now() - started) / 1000;
        const st = await page.eval(`(() => { const v = window.bspkitViewer;
            return {state: v.state, error: v.error, loadingFrames: v.status.loadingFrames, summary: v.summary, info: v.info, start: v.start, timing: v.timing,
                    entities: v.entities.length, check: v.check.length}; })()`);
        Object.assign(r, st);
        console.log(`note ${c.family}: opened by ${c.drop ? 'drag-and-drop' : c.picker ? 'the file picker' : '?map=URL'}; `
                    + `${st.loadingFrames || 0} frames drawn while loading, longest ${Math.round(st.timing.longestFrameWhileLoading || 0)} ms`);
        if (!check(status === 'ready', `${c.family}: ${c.rel} reaches "ready"`, status === 'ready' ? `${r.loadSeconds.toFixed(1)} s` : st.error)) {
            await shot(`${c.family}_failed.png`);
            continue;
        }
        for (const k of ['triangles', 'materials', 'primitives', 'images'])
            check(st.summary[k] === native.json[k], `${c.family}: ${k} ${st.summary[k]} (WebAssembly) == ${native.json[k]} (bspkit export --json)`);
        // The view from the player start.
        const settled = await page.eval('window.bspkitViewer.settle()');
        Object.assign(r, { atStart: settled });
        r.coverage = await page.eval('window.bspkitViewer.coverage()');
        r.startShot = await shot(`${c.family}_start.png`);
        check(r.coverage > 0.5, `${c.family}: the canvas shows the map from ${st.start ? st.start.classname : 'the bounds view'}`,
              `${(r.coverage * 100).toFixed(1)}% non-background pixels`);
        // PVS: `bspkit vis --json` tells whether the map's visibility hides anything at all (some maps are
        // vised with everything visible from everywhere: then everything must be drawn).
        const vis = spawnSync(bspkit, ['vis', file, '--json'], { encoding: 'utf8' });
        const visFraction = vis.status === 0 ? JSON.parse(vis.stdout).average_visible_fraction : null;
        r.visFraction = visFraction;
        if (st.info.hasVis && visFraction !== null && visFraction < 0.999) {
            check(settled.cluster >= 0 && settled.drawnFaces > 0 && settled.drawnFaces < settled.totalFaces,
                  `${c.family}: PVS culls from the start (cluster ${settled.cluster}; bspkit vis: ${(visFraction * 100).toFixed(1)}% visible on average)`,
                  `${settled.drawnFaces} of ${settled.totalFaces} faces drawn`);
        } else if (st.info.hasVis) {
            check(settled.cluster >= 0 && settled.drawnFaces === settled.totalFaces,
                  `${c.family}: every face drawn from cluster ${settled.cluster} (bspkit vis: every cluster sees ${visFraction === null ? '?' : (visFraction * 100).toFixed(1) + '%'})`,
                  `${settled.drawnFaces} of ${settled.totalFaces} faces drawn`);
        } else {
            console.log(`note ${c.family}: no visibility data: ${settled.drawnFaces} of ${settled.totalFaces} faces drawn`);
        }
        // The fly camera: holding W moves it, dragging turns it.
        if (c.family === 'quake1') {
            const before = await page.eval('window.bspkitViewer.camera');
            await page.hold('KeyW', 'w', 400);
            await page.drag(400, 300, 120, 0);
            const after = await page.eval('window.bspkitViewer.camera');
            const moved = Math.hypot(...after.position.map((v, i) => v - before.position[i]));
            check(moved > 20 && Math.abs(after.yaw - before.yaw) > 0.2, `${c.family}: W moves the camera, a drag turns it`,
                  `moved ${moved.toFixed(0)} units, turned ${(after.yaw - before.yaw).toFixed(2)} rad`);
        }
        // Picking: a point entity seen from 64 units above its origin (the player start when there is one).
        const target = await page.eval(`(() => { const v = window.bspkitViewer;
            const points = v.entities.filter((e) => e.model < 0 && e.origin);
            const e = (v.start && points.find((p) => p.index === v.start.index)) || points[0];
            return e ? {index: e.index, classname: e.classname, origin: e.origin} : null; })()`);
        if (check(!!target, `${c.family}: a point entity to pick`)) {
            const [x, y, z] = target.origin;
            await page.eval(`window.bspkitViewer.flyTo([${x}, ${y}, ${z + 64}], {lookAt: [${x}, ${y}, ${z}]})`);
            await page.eval('window.bspkitViewer.settle()');
            const pos = await page.eval(`window.bspkitViewer.project([${x}, ${y}, ${z}])`);
            // A real click on the canvas (pointer events, as from a user) at the entity's projected position.
            const rect = await page.eval("(() => { const r = document.getElementById('canvas').getBoundingClientRect(); return [r.left, r.top]; })()");
            if (pos) await page.click(rect[0] + pos[0], rect[1] + pos[1]);
            const picked = pos && await page.eval(`(() => { const s = window.bspkitViewer.selected;
                return {picked: s && {index: s.index, classname: s.classname}, panel: document.getElementById('entity').textContent}; })()`);
            await page.eval('window.bspkitViewer.settle()');
            r.pickShot = await shot(`${c.family}_pick.png`);
            r.picked = picked;
            check(picked && picked.picked && picked.picked.index === target.index && picked.panel.includes(target.classname),
                  `${c.family}: clicking entity ${target.index} at (${pos ? pos.map(Math.round).join(', ') : '-'}) px shows "${target.classname}"`,
                  picked ? JSON.stringify(picked.picked) : 'not on screen');
        }
        // Toggles: tool surfaces re-export with scene({tools: true}) (= `bspkit export --tools`); lightmap only and
        // no sky are material / visibility switches (screenshots to look at).
        if (c.family === 'quake2' || c.family === 'quake1') {
            await page.eval('window.bspkitViewer.home()');
            const tools = nativeExport(file, undefined, ['--tools']);
            const status = await page.eval("window.bspkitViewer.setToggle('tools', true).then(() => window.bspkitViewer.whenReady())");
            const summary = await page.eval('window.bspkitViewer.summary');
            check(status === 'ready' && summary.triangles === tools.json.triangles && summary.materials === tools.json.materials,
                  `${c.family}: "tool surfaces" shows the --tools export`,
                  `${summary.triangles} triangles, ${summary.materials} materials (bspkit export --tools: ${tools.json.triangles}, ${tools.json.materials})`);
            await page.eval('window.bspkitViewer.settle()');
            await shot(`${c.family}_tools.png`);
            await page.eval("window.bspkitViewer.setToggle('tools', false).then(() => window.bspkitViewer.whenReady())");
            await page.eval("window.bspkitViewer.setToggle('lightmapOnly', true)");
            await page.eval('window.bspkitViewer.settle()');
            const lm = await page.eval('window.bspkitViewer.coverage()');
            await shot(`${c.family}_lightmap_only.png`);
            check(lm > 0.5, `${c.family}: "lightmap only" shows the map`, `${(lm * 100).toFixed(1)}% non-background pixels`);
            await page.eval("window.bspkitViewer.setToggle('lightmapOnly', false)");
        }
        // A check finding with a position: clicking it flies the camera there.
        const finding = await page.eval('window.bspkitViewer.check.findIndex((f) => f.position)');
        if (finding >= 0) {
            const f = await page.eval(`(async () => { const v = window.bspkitViewer;
                document.querySelector('#check li[data-index="${finding}"]').click();
                await new Promise((r) => setTimeout(r, 800));
                await v.settle();
                const p = v.camera.position, q = v.check[${finding}].position;
                return {line: v.check[${finding}].line, distance: Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]),
                        leaf: v.leaf, contents: v.contents, coverage: v.coverage()}; })()`);
            await shot(`${c.family}_finding.png`);
            check(f.distance < 400, `${c.family}: clicking the finding "${f.line}" flies there`, `camera ${f.distance.toFixed(0)} units away`);
            // ... and lands in open space (not in solid, not outside the map), looking at the map.
            check(f.leaf >= 0 && Array.isArray(f.contents) && !f.contents.includes('solid') && f.coverage > 0.5,
                  `${c.family}: the camera lands in an open leaf`,
                  `leaf ${f.leaf}, contents [${f.contents}], ${(f.coverage * 100).toFixed(1)}% of the canvas shows the map`);
        } else if (c.finding) {
            check(false, `${c.family}: a check finding with a position to fly to`, 'none listed');
        } else {
            console.log(`note ${c.family}: no check finding with a position`);
        }
    }

    // Files given with the map: hl_undertow keeps its textures in halflife.wad (its "wad" key). A WAD made
    // here for the names `bspkit export --json` lists as missing, given four ways.
    const undertow = join(corpus, 'hl1_v30/hl_undertow.bsp');
    if (check(existsSync(undertow), `companions: corpus file ${undertow} present`) && (!only || only.split(',').includes('companions'))) {
        const empty = mkdtempSync(join(tmpdir(), 'bspkit-viewer-nowad-'));
        const names = nativeExport(undertow, undefined, ['--wad', empty]).json.missing.map((m) => m.material);
        rmSync(empty, { recursive: true, force: true });
        mkdirSync(join(given, 'valve'), { recursive: true });
        writeFileSync(join(given, 'valve', 'halflife.wad'), makeWad3(names));
        writeFileSync(join(given, 'valve', 'readme.txt'), 'not a texture\n');
        const withWad = nativeExport(undertow, undefined, ['--wad', join(given, 'valve'), '--game-dir', join(given, 'valve')]);
        check(names.length > 10 && withWad.json.missing.length === 0, 'companions: the WAD made here holds every texture the map names',
              `${names.length} names; bspkit export --wad: ${withWad.json.missing.length} missing`);
        const seen = async () => page.eval(`(() => { const v = window.bspkitViewer;
            return {state: v.state, error: v.error, summary: v.summary, textures: v.info && v.info.textures, companions: v.companions,
                    panel: document.getElementById('textures').textContent}; })()`);
        const expectTextures = (how, st) => {
            check(st.state === 'ready', `companions (${how}): the map reaches "ready"`, st.error || '');
            if (st.state !== 'ready') return;
            for (const k of ['images', 'materials', 'triangles'])
                check(st.summary[k] === withWad.json[k], `companions (${how}): ${k} ${st.summary[k]} == ${withWad.json[k]} (bspkit export --wad --json)`);
            check(st.textures.searched && st.textures.found === names.length && st.textures.missing.length === 0
                  && st.panel.includes(`${names.length} textures found`),
                  `companions (${how}): the Textures panel says the WAD brought all ${names.length}`, JSON.stringify(st.panel.slice(0, 120)));
        };
        // 1. Without the WAD the panel says what is missing and how to give it.
        await openPage(`corpus/hl1_v30/hl_undertow.bsp`);
        let st = await seen();
        check(st.state === 'ready' && !st.textures.searched && st.textures.untextured > 0 && st.panel.includes('have no texture in the map'),
              'companions: without them the Textures panel says the textures are kept outside the map', JSON.stringify(st.panel.slice(0, 160)));
        // 2. Picked together with the map (the picker takes several files).
        await openPage(null, [undertow, join(given, 'valve', 'halflife.wad')]);
        st = await seen();
        expectTextures('picked with the map', st);
        await page.eval('window.bspkitViewer.settle()');
        const coverage = await page.eval('window.bspkitViewer.coverage()');
        await shot('companions_wad_start.png');
        check(coverage > 0.5, 'companions: the textured map shows from the player start', `${(coverage * 100).toFixed(1)}% non-background pixels`);
        // 3. The map and a game folder dropped together (the folder's files keep their paths).
        await openPage(null, [undertow, join(given, 'valve')], 'drop');
        st = await seen();
        expectTextures('a dropped folder', st);
        check(st.companions.includes('valve/halflife.wad') && !st.companions.includes('valve/readme.txt'),
              'companions: a dropped folder gives its WADs with their paths, not its other files', JSON.stringify(st.companions));
        // 4. ?map=URL&companion=URL
        await gotoPage(`${base}index.html?map=${encodeURIComponent('corpus/hl1_v30/hl_undertow.bsp')}&companion=${encodeURIComponent('given/valve/halflife.wad')}`);
        await page.eval('window.bspkitViewer.whenReady()', 600000);
        expectTextures('?companion=URL', await seen());
        // A companion URL that is not there: said on the panel, the map opens without it.
        await gotoPage(`${base}index.html?map=${encodeURIComponent('corpus/hl1_v30/hl_undertow.bsp')}&companion=${encodeURIComponent('given/valve/nope.wad')}`);
        await page.eval('window.bspkitViewer.whenReady()', 600000);
        st = await seen();
        check(st.state === 'ready' && !st.textures.searched && /nope\.wad: not fetched: HTTP 404/.test(st.panel),
              'companions: a companion URL that is not there is said on the panel, the map opens without it', JSON.stringify(st.panel.slice(-120)));
        // 5. `bspkit serve` of a game folder: the page's list links the map with the WAD its "wad" key names.
        const served = mkdtempSync(join(tmpdir(), 'bspkit-viewer-served-'));
        mkdirSync(join(served, 'cstrike', 'maps'), { recursive: true });
        writeFileSync(join(served, 'cstrike', 'maps', 'hl_undertow.bsp'), readFileSync(undertow));
        writeFileSync(join(served, 'cstrike', 'halflife.wad'), makeWad3(names));
        const serving = spawn(bspkit, ['serve', served, '--port', '0', '--site', site], { stdio: ['ignore', 'pipe', 'ignore'] });
        try {
            const url = await new Promise((done) => {
                let out = '';
                const timer = setTimeout(() => done(''), 60000);
                serving.stdout.on('data', (c) => { out += c; if (out.includes('\n')) { clearTimeout(timer); done(out.split('\n')[0].trim()); } });
                serving.on('exit', () => done(''));
            });
            if (check(url.startsWith('http://127.0.0.1:'), 'companions: bspkit serve prints its URL', url)) {
                await page.goto(url);
                let link = null;
                for (let i = 0; i < 100 && !link; ++i) {
                    await new Promise((ok) => setTimeout(ok, 100));
                    link = await page.eval(`(() => { const a = document.querySelector('#entity ul.maps a');
                        return a ? {href: a.getAttribute('href'), text: a.textContent} : null; })()`);
                }
                check(link && link.text.includes('+ halflife.wad'), 'companions: the served list names the map with its WAD', JSON.stringify(link));
                if (link) {
                    await gotoPage(new URL(link.href, url).href);
                    await page.eval('window.bspkitViewer.whenReady()', 600000);
                    expectTextures('bspkit serve', await seen());
                    await page.eval('window.bspkitViewer.settle()');
                    await shot('companions_served.png');
                }
            }
        } finally {
            serving.kill('SIGTERM');
            rmSync(served, { recursive: true, force: true });
        }
        // A .bsp missing from what was picked: the page says so.
        await openPage(null, [join(given, 'valve', 'halflife.wad')]);
        st = await seen();
        check(st.state === 'error' && /no \.bsp among the 1 file given/.test(st.error), 'companions: files without a map give a one-line error', st.error);
    }

    // Damaged files: the page shows the CLI's one-line error.
    const source = join(corpus, 'q2_v38/q2_base1.bsp');
    if (check(existsSync(source), `damaged: corpus file ${source} present`)) {
        writeFileSync(join(bad, 'q2_base1_truncated.bsp'), readFileSync(source).subarray(0, 100000));
        writeFileSync(join(bad, 'not_a_map.bsp'), Buffer.from('this is not a BSP file\n'.repeat(40)));
        for (const name of ['q2_base1_truncated.bsp', 'not_a_map.bsp']) {
            const native = nativeExport(name, bad);
            const status = await openPage(`bad/${name}`);
            const seen = await page.eval(`({error: window.bspkitViewer.error,
                shown: document.getElementById('error').hidden ? null : document.getElementById('error').textContent})`);
            await shot(`damaged_${name.replace('.bsp', '')}.png`);
            // With no map the canvas is background only: the coverage measure above can fail.
            seen.coverage = await page.eval('window.bspkitViewer.coverage()');
            results.push({ damaged: name, status, native: native.lastLine, ...seen });
            check(seen.coverage < 0.01, `damaged ${name}: the canvas shows no map`, `${(seen.coverage * 100).toFixed(1)}% non-background pixels`);
            check(native.status === 1 && status === 'error' && seen.error === native.lastLine && seen.shown === native.lastLine,
                  `damaged ${name}: the page shows the CLI's line`, `page: ${JSON.stringify(seen.shown)}; cli: ${JSON.stringify(native.lastLine)}`);
        }
    }
} catch (e) {
    check(false, 'the browser session', e.stack || String(e));
    console.log(page.console.slice(-20).join('\n'));
} finally {
    writeFileSync(join(artefacts, 'results.json'), JSON.stringify(results, null, 1));
    if (page.console.length) writeFileSync(join(artefacts, 'console.txt'), page.console.join('\n') + '\n');
    await browser.close();
    server.close();
    rmSync(bad, { recursive: true, force: true });
    rmSync(given, { recursive: true, force: true });
}
console.log(failures ? `${failures} check(s) failed; screenshots in ${artefacts}` : `all checks passed; screenshots in ${artefacts}`);
process.exit(failures ? 1 : 0);
