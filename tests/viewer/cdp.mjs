// Headless Chromium (Debian's /usr/bin/chromium, SwiftShader WebGL) driven over
// the DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages ending
// in NUL, Chromium reads fd 3 and writes fd 4), plus a static file server for
// the viewer's site. Shared by tests/viewer/browser_test.mjs and
// bench/viewer_bench.mjs; no npm package needed.
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';

const TYPES = {
    '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css',
    '.wasm': 'application/wasm', '.json': 'application/json', '.png': 'image/png', '.glb': 'model/gltf-binary',
};

/// Serves `mounts` ({"/prefix/": directory}, longest prefix first; "/" the site) on 127.0.0.1.
export function serve(mounts) {
    const entries = Object.entries(mounts).sort((a, b) => b[0].length - a[0].length)
        .map(([prefix, dir]) => [prefix, resolve(dir)]);
    const server = createServer((req, res) => {
        const url = new URL(req.url, 'http://127.0.0.1');
        let path = decodeURIComponent(url.pathname);
        if (path.endsWith('/')) path += 'index.html';
        for (const [prefix, dir] of entries) {
            if (!path.startsWith(prefix)) continue;
            const file = resolve(dir, '.' + sep + path.slice(prefix.length));
            if (!file.startsWith(dir + sep) || !existsSync(file) || !statSync(file).isFile()) break;
            res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream',
                                 'content-length': statSync(file).size, 'cache-control': 'no-store' });
            createReadStream(file).pipe(res);
            return;
        }
        res.writeHead(404);
        res.end('not found');
    });
    return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok({ server, port: server.address().port })));
}

/// Starts Chromium; returns {send(method, params), page: session helpers, close()}.
export async function launch({ chromium = '/usr/bin/chromium', width = 1280, height = 800 } = {}) {
    if (!existsSync(chromium)) throw new Error(`${chromium} not found (Debian package chromium: make test-deps installs it)`);
    const profile = mkdtempSync(join(tmpdir(), 'bspkit-viewer-'));
    const browser = spawn(chromium, [
        '--headless', '--no-sandbox', '--disable-gpu', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
        '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update',
        '--disable-sync', '--disable-background-timer-throttling', '--disable-renderer-backgrounding',
        '--remote-debugging-pipe', `--user-data-dir=${profile}`, `--window-size=${width},${height}`, 'about:blank',
    ], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true });
    // Chromium and its helpers are a process group of their own (detached),
    // killed together: helpers that outlived a kill of the main process wrote
    // into the profile after it was removed and left the folder behind. A
    // detached group does not get the terminal's signals: an interrupted
    // test kills it here.
    const killGroup = () => {
        try { process.kill(-browser.pid, 'SIGKILL'); } catch { browser.kill('SIGKILL'); }
    };
    // The profile, and the folder of the socket Chromium made in /tmp for it
    // (its SingletonSocket links there): a killed Chromium removes neither.
    const removeProfile = () => {
        try {
            const socketDir = dirname(readlinkSync(join(profile, 'SingletonSocket')));
            if (basename(socketDir).startsWith('org.chromium.')) rmSync(socketDir, { recursive: true, force: true });
        } catch {}
        try { rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }); } catch {}
    };
    const onSignal = () => {
        killGroup();
        removeProfile();
        process.exit(1);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    let log = '';
    browser.stderr.on('data', (c) => (log = (log + c).slice(-4000)));
    const toBrowser = browser.stdio[3], fromBrowser = browser.stdio[4];
    let nextId = 1, buffer = '';
    const waiting = new Map();
    const listeners = [];
    let exited = null;
    fromBrowser.on('data', (chunk) => {
        buffer += chunk.toString('utf8');
        let end;
        while ((end = buffer.indexOf('\0')) >= 0) {
            const msg = JSON.parse(buffer.slice(0, end));
            buffer = buffer.slice(end + 1);
            if (msg.id && waiting.has(msg.id)) {
                const { ok, fail } = waiting.get(msg.id);
                waiting.delete(msg.id);
                if (msg.error) fail(new Error(`${msg.error.message} ${msg.error.data || ''}`.trim()));
                else ok(msg.result);
            } else {
                for (const l of listeners) l(msg);
            }
        }
    });
    browser.on('exit', (code) => {
        exited = `chromium exited (${code}):\n${log}`;
        for (const { fail } of waiting.values()) fail(new Error(exited));
        waiting.clear();
    });
    const send = (method, params = {}, sessionId) => new Promise((ok, fail) => {
        if (exited) return fail(new Error(exited));
        const id = nextId++;
        waiting.set(id, { ok, fail });
        toBrowser.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
    });
    const { targetInfos } = await send('Target.getTargets');
    const target = targetInfos.find((t) => t.type === 'page');
    const { sessionId } = await send('Target.attachToTarget', { targetId: target.targetId, flatten: true });
    const s = (method, params) => send(method, params, sessionId);
    await s('Page.enable');
    await s('Runtime.enable');
    const consoleLines = [];
    listeners.push((msg) => {
        if (msg.sessionId !== sessionId) return;
        if (msg.method === 'Runtime.consoleAPICalled')
            consoleLines.push(`${msg.params.type}: ${msg.params.args.map((a) => a.value ?? a.description ?? '').join(' ')}`);
        if (msg.method === 'Runtime.exceptionThrown')
            consoleLines.push(`exception: ${msg.params.exceptionDetails.exception?.description || msg.params.exceptionDetails.text}`);
    });
    const page = {
        console: consoleLines,
        /// Evaluates `expression` in the page (awaiting a promise); returns its JSON value.
        async eval(expression, timeoutMs = 180000) {
            const result = await Promise.race([
                s('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true }),
                new Promise((_, fail) => setTimeout(() => fail(new Error(`no answer after ${timeoutMs / 1000} s: ${expression}`)), timeoutMs)),
            ]);
            if (result.exceptionDetails)
                throw new Error(`page exception: ${result.exceptionDetails.exception?.description || result.exceptionDetails.text}`);
            return result.result.value;
        },
        async goto(url) {
            const loaded = new Promise((ok) => {
                const l = (msg) => {
                    if (msg.sessionId === sessionId && msg.method === 'Page.loadEventFired') {
                        listeners.splice(listeners.indexOf(l), 1);
                        ok();
                    }
                };
                listeners.push(l);
            });
            await s('Page.navigate', { url });
            await Promise.race([loaded, new Promise((_, fail) => setTimeout(() => fail(new Error(`${url}: no load event after 60 s`)), 60000))]);
        },
        /// A real left click at page coordinates (CSS pixels): pointer/mouse events as from a user.
        async click(x, y) {
            await s('Input.dispatchMouseEvent', { type: 'mouseMoved', x, y });
            await s('Input.dispatchMouseEvent', { type: 'mousePressed', x, y, button: 'left', buttons: 1, clickCount: 1 });
            await s('Input.dispatchMouseEvent', { type: 'mouseReleased', x, y, button: 'left', buttons: 0, clickCount: 1 });
        },
        /// A left-button drag from (x, y) by (dx, dy) in `steps` moves.
        async drag(x, y, dx, dy, steps = 8) {
            await s('Input.dispatchMouseEvent', { type: 'mousePressed', x, y, button: 'left', buttons: 1, clickCount: 1 });
            for (let i = 1; i <= steps; ++i)
                await s('Input.dispatchMouseEvent', { type: 'mouseMoved', x: x + dx * i / steps, y: y + dy * i / steps, button: 'left', buttons: 1 });
            await s('Input.dispatchMouseEvent', { type: 'mouseReleased', x: x + dx, y: y + dy, button: 'left', buttons: 0, clickCount: 1 });
        },
        /// Holds the key `code` (e.g. "KeyW") for `ms` milliseconds.
        async hold(code, key, ms) {
            await s('Input.dispatchKeyEvent', { type: 'keyDown', code, key });
            await new Promise((ok) => setTimeout(ok, ms));
            await s('Input.dispatchKeyEvent', { type: 'keyUp', code, key });
        },
        /// Drags the files (paths) from outside the browser and drops them at (x, y), as a user does.
        async dropFiles(x, y, files) {
            const data = { items: [], files, dragOperationsMask: 1 };
            for (const type of ['dragEnter', 'dragOver', 'drop'])
                await s('Input.dispatchDragEvent', { type, x, y, data });
        },
        /// Chooses `files` (paths) in the <input type=file> matching `selector`, as a user does.
        async setFiles(selector, files) {
            await s('DOM.enable');
            const { root } = await s('DOM.getDocument');
            const { nodeId } = await s('DOM.querySelector', { nodeId: root.nodeId, selector });
            await s('DOM.setFileInputFiles', { nodeId, files });
        },
        /// The whole page as a PNG (Buffer).
        async screenshot() {
            const { data } = await s('Page.captureScreenshot', { format: 'png' });
            return Buffer.from(data, 'base64');
        },
    };
    const close = () => new Promise((done) => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        if (exited) {
            killGroup();  // helpers the main process left
            removeProfile();
            return done();
        }
        browser.removeAllListeners('exit');
        browser.on('exit', () => {
            removeProfile();
            done();
        });
        killGroup();
    });
    return { page, close, log: () => log };
}
