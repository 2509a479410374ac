// `bspkit serve FILE` with the real viewer site found on its own (no --site: the build tree's
// build/viewer/site beside build/test/bspkit): the URL it prints opens the page, the page's files
// come with the types a browser needs (application/wasm for WebAssembly streaming, JavaScript for
// modules), and the map named in the URL's ?map= is the file byte for byte.
//
//   node serve_site_test.mjs --bspkit BSPKIT --site SITE --map MAP.bsp
// Exit 0 when every check passes; 1 with the failures on stderr.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const args = process.argv.slice(2);
const option = (name) => {
    const i = args.indexOf(name);
    return i < 0 ? undefined : args[i + 1];
};
const bspkit = option('--bspkit'), site = option('--site'), map = option('--map');
const failures = [];
const check = (ok, what) => {
    if (!ok) failures.push(what);
    process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}\n`);
};
if (!bspkit || !site || !map) {
    process.stderr.write('usage: node serve_site_test.mjs --bspkit BSPKIT --site SITE --map MAP.bsp\n');
    process.exit(2);
}
for (const f of [bspkit, join(site, 'index.html'), map])
    if (!existsSync(f)) {
        process.stderr.write(`serve_site_test: ${f} is missing (run make viewer / make build)\n`);
        process.exit(1);
    }

const server = spawn(bspkit, ['serve', map, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
let err = '';
server.stderr.on('data', (c) => (err += c));
const timer = setTimeout(() => {
    process.stderr.write(`serve_site_test: no URL from bspkit serve in 60 s; stderr: ${err}\n`);
    server.kill('SIGKILL');
    process.exit(1);
}, 60000);
const url = await new Promise((done) => {
    let out = '';
    server.stdout.on('data', (c) => {
        out += c;
        if (out.includes('\n')) done(out.split('\n')[0].trim());
    });
    server.on('exit', () => done(''));
});
clearTimeout(timer);
// The line naming the site follows the URL on stderr: wait for it (at most 60 s).
for (let waited = 0; !err.includes('the viewer from') && waited < 60000; waited += 50)
    await new Promise((r) => setTimeout(r, 50));
try {
    check(/^http:\/\/127\.0\.0\.1:\d+\/\?map=maps\//.test(url), `URL printed: ${url}`);
    check(err.includes(resolve(site)), `the site found on its own is ${resolve(site)} (stderr: ${err.trim()})`);
    const base = new URL(url);
    const get = async (path) => {
        const r = await fetch(new URL(path, base));
        return { status: r.status, type: r.headers.get('content-type') || '', body: Buffer.from(await r.arrayBuffer()) };
    };
    const page = await get(url);
    check(page.status === 200 && page.type.startsWith('text/html'), `page: ${page.status} ${page.type}`);
    check(page.body.equals(readFileSync(join(site, 'index.html'))), 'page is the site index.html');
    for (const [path, type] of [
        ['wasm/bspkit_viewer.wasm', 'application/wasm'],
        ['wasm/bspkit_viewer.js', 'text/javascript'],
        ['js/main.js', 'text/javascript'],
        ['three/build/three.module.js', 'text/javascript'],
    ]) {
        const r = await get(path);
        check(r.status === 200 && r.type.startsWith(type), `${path}: ${r.status} ${r.type}`);
        check(r.body.equals(readFileSync(join(site, path))), `${path}: the site's bytes`);
    }
    const mapPath = base.searchParams.get('map');
    const m = await get(mapPath);
    check(m.status === 200 && m.body.equals(readFileSync(map)), `${mapPath}: the map byte for byte (${m.body.length} bytes)`);
    const list = JSON.parse((await get('maps/index.json')).body.toString());
    check(list.maps.length === 1 && list.maps[0].url === mapPath, 'maps/index.json lists the one map');
    const outside = await get('maps/..%2f..%2fetc%2fpasswd');
    check(outside.status === 404, `a path out of the maps: ${outside.status}`);
} finally {
    server.kill('SIGTERM');
}
if (failures.length) {
    process.stderr.write(`serve_site_test: ${failures.length} failed:\n  ${failures.join('\n  ')}\n`);
    process.exit(1);
}
