// Renders an exported .glb the way a user sees it in a stock viewer: three.js
// (GLTFLoader, pinned by package-lock.json) in headless Chromium, no lights,
// a camera fitted to the world bounds. Prints one JSON line of pixel
// statistics on stdout and writes the rendering as a PNG.
//
//   node render.mjs MODEL.glb OUT.png [--view oblique|top] [--size N] [--chromium PATH]
//
// Two passes with the same camera: an id pass (sky materials magenta, every
// other material white, background black) tells which pixels show the
// world, the sky or nothing; the normal pass gives the colours. Output:
//   {"world": fraction of pixels showing non-sky geometry, "sky": fraction
//    showing sky, "luma": {"mean", "p10", "p50", "p90"} of the world pixels
//    (Rec. 709 luma of the 8-bit sRGB pixel, 0-255), "dark": fraction of world
//    pixels with luma < 16, "bright": fraction with luma > 245}
// Exit 0 on success, 1 with a message on stderr otherwise (page errors,
// Chromium missing, 120 s time limit).
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => {
    const i = args.indexOf(name);
    if (i < 0) return fallback;
    const v = args[i + 1];
    args.splice(i, 2);
    return v;
};
const view = option('--view', 'oblique');
const size = Number(option('--size', '384'));
const chromium = option('--chromium', '/usr/bin/chromium');
const [model, out] = args;
const fail = (message) => {
    process.stderr.write(`render.mjs: ${message}\n`);
    process.exit(1);
};
if (!model || !out || !['oblique', 'top'].includes(view) || !(size >= 16 && size <= 4096))
    fail('usage: node render.mjs MODEL.glb OUT.png [--view oblique|top] [--size N] [--chromium PATH]');
if (!existsSync(model)) fail(`${model}: no such file`);
if (!existsSync(chromium)) fail(`${chromium} not found (Debian package chromium: make test installs it)`);
const threeDir = join(here, 'node_modules', 'three');
if (!existsSync(join(threeDir, 'build', 'three.module.js')))
    fail('three.js is not installed: run `make deps` (npm ci in tools/render-check)');

const page = `<!doctype html><html><body style="margin:0">
<script type="importmap">{"imports": {"three": "/three/build/three.module.js", "three/addons/": "/three/examples/jsm/"}}</script>
<script type="module">
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
const size = ${size}, view = ${JSON.stringify(view)};
const report = (body) => fetch('/result', { method: 'POST', body: JSON.stringify(body) });
window.addEventListener('error', (e) => report({ error: String(e.message || e) }));
window.addEventListener('unhandledrejection', (e) => report({ error: String(e.reason && e.reason.stack || e.reason) }));
const renderer = new THREE.WebGLRenderer({ antialias: false, preserveDrawingBuffer: true });
renderer.setPixelRatio(1);
renderer.setSize(size, size);
document.body.appendChild(renderer.domElement);
const gltf = await new GLTFLoader().loadAsync('/model.glb');
const scene = new THREE.Scene();
scene.add(gltf.scene);  // no lights: what shows is what the materials carry
const box = new THREE.Box3().setFromObject(gltf.scene);
if (box.isEmpty()) throw new Error('the model has no geometry');
const centre = box.getCenter(new THREE.Vector3()), extent = box.getSize(new THREE.Vector3());
const camera = new THREE.PerspectiveCamera(50, 1, 1, 2);
const half = THREE.MathUtils.degToRad(camera.fov / 2);
let distance;
if (view === 'top') {
    distance = Math.max(extent.x, extent.z) / 2 / Math.tan(half) + extent.y / 2;
    camera.position.set(centre.x, centre.y + distance, centre.z);
    camera.up.set(0, 0, -1);
} else {
    const radius = extent.length() / 2;
    distance = radius / Math.sin(half);
    camera.position.copy(centre).addScaledVector(new THREE.Vector3(1, 1.1, 0.8).normalize(), distance);
}
camera.near = Math.max(distance / 1000, 1e-3);
camera.far = distance + extent.length() * 2;
camera.lookAt(centre);
camera.updateProjectionMatrix();
const pixels = () => {
    const gl = renderer.getContext(), data = new Uint8Array(size * size * 4);
    gl.readPixels(0, 0, size, size, gl.RGBA, gl.UNSIGNED_BYTE, data);
    return data;
};
// Id pass.
const materials = new Map();
const skyMat = new THREE.MeshBasicMaterial({ color: 0xff00ff }), worldMat = new THREE.MeshBasicMaterial({ color: 0xffffff });
gltf.scene.traverse((o) => {
    if (!o.isMesh) return;
    materials.set(o, o.material);
    const flags = (o.material.userData && o.material.userData.flags) || [];
    const m = (flags.includes('sky') ? skyMat : worldMat).clone();
    m.side = o.material.side;
    m.alphaTest = o.material.alphaTest;
    m.map = o.material.alphaTest > 0 ? o.material.map : null;
    o.material = m;
});
scene.background = new THREE.Color(0x000000);
renderer.outputColorSpace = THREE.LinearSRGBColorSpace;
renderer.render(scene, camera);
const ids = pixels();
for (const [o, m] of materials) o.material = m;
renderer.outputColorSpace = THREE.SRGBColorSpace;
scene.background = new THREE.Color(0x203040);
renderer.render(scene, camera);
const colour = pixels();
let world = 0, sky = 0;
const luma = [];
for (let i = 0; i < size * size * 4; i += 4) {
    if (ids[i] > 200 && ids[i + 1] < 50) { ++sky; continue; }
    if (ids[i] < 200) continue;
    ++world;
    luma.push(0.2126 * colour[i] + 0.7152 * colour[i + 1] + 0.0722 * colour[i + 2]);
}
luma.sort((a, b) => a - b);
const pct = (p) => luma.length ? luma[Math.min(luma.length - 1, Math.floor(p * luma.length))] : 0;
const mean = luma.length ? luma.reduce((a, b) => a + b, 0) / luma.length : 0;
report({
    world: world / (size * size), sky: sky / (size * size),
    luma: { mean, p10: pct(0.1), p50: pct(0.5), p90: pct(0.9) },
    dark: luma.length ? luma.filter((v) => v < 16).length / luma.length : 0,
    bright: luma.length ? luma.filter((v) => v > 245).length / luma.length : 0,
    png: renderer.domElement.toDataURL('image/png'),
});
</script></body></html>`;

const types = { '.js': 'text/javascript', '.html': 'text/html', '.glb': 'model/gltf-binary' };
let browser = null, profile = null, timer = null;
// Chromium runs in a process group of its own (spawned detached) and the whole
// group is killed: its helpers (zygote, GPU, network) outlived a kill of the
// main process long enough to write into the profile after it was removed,
// and left a bspkit-render-* folder behind in every other run.
const killGroup = (child) => {
    try {
        process.kill(-child.pid, 'SIGKILL');
    } catch {
        child.kill('SIGKILL');
    }
};
const finish = (code, message) => {
    if (timer) clearTimeout(timer);
    if (browser) {
        const dir = profile;
        browser.removeAllListeners('exit');
        browser.on('exit', () => removeProfile(dir));
        killGroup(browser);
    } else if (profile) {
        removeProfile(profile);
    }
    server.close();
    if (message) process.stderr.write(`render.mjs: ${message}\n`);
    process.exitCode = code;
};
// The profile, and the folder of the socket Chromium made in /tmp for it
// (the profile's SingletonSocket links to it): a killed Chromium removes
// neither, and every render left an org.chromium.Chromium.* folder behind.
const removeProfile = (dir) => {
    try {
        const socketDir = dirname(readlinkSync(join(dir, 'SingletonSocket')));
        if (basename(socketDir).startsWith('org.chromium.')) rmSync(socketDir, { recursive: true, force: true });
    } catch {}
    try {
        rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch {}
};
// Interrupted (Ctrl-C, a test's time limit): a detached group is not sent
// the terminal's signal, so it is killed here.
for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
        if (browser) killGroup(browser);
        if (profile) removeProfile(profile);
        process.exit(1);
    });
}
const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (req.method === 'POST' && url.pathname === '/result') {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
            res.end('ok');
            let result;
            try {
                result = JSON.parse(body);
            } catch (e) {
                return finish(1, `unreadable result from the page: ${e.message}`);
            }
            if (result.error) return finish(1, `${model}: the page failed: ${result.error}`);
            writeFileSync(out, Buffer.from(result.png.replace(/^data:image\/png;base64,/, ''), 'base64'));
            delete result.png;
            process.stdout.write(JSON.stringify({ file: model, view, ...result }) + '\n');
            finish(0);
        });
        return;
    }
    let file = null;
    if (url.pathname === '/' || url.pathname === '/index.html') {
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end(page);
    }
    if (url.pathname === '/model.glb') file = resolve(model);
    else if (url.pathname.startsWith('/three/')) {
        file = resolve(threeDir, '.' + decodeURIComponent(url.pathname.slice('/three'.length)));
        if (!file.startsWith(threeDir + '/')) file = null;  // nothing outside three's folder
    }
    if (!file || !existsSync(file)) {
        res.writeHead(404);
        return res.end();
    }
    res.writeHead(200, { 'content-type': types[extname(file)] || 'application/octet-stream' });
    createReadStream(file).pipe(res);
});
server.listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    profile = mkdtempSync(join(tmpdir(), 'bspkit-render-'));
    browser = spawn(chromium, [
        '--headless', '--no-sandbox', '--disable-gpu', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
        '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update',
        '--disable-sync', `--user-data-dir=${profile}`, `--window-size=${size},${size}`,
        `http://127.0.0.1:${port}/index.html`,
    ], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    let log = '';
    browser.stderr.on('data', (c) => (log = (log + c).slice(-4000)));
    browser.on('exit', (code) => {
        browser = null;
        finish(1, `chromium exited (${code}) before the page reported:\n${log}`);
    });
    timer = setTimeout(() => finish(1, `no result after 120 s:\n${log}`), 120000);
});
