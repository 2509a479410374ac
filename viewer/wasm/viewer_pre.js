// Prepended to bspkit_viewer.js (--pre-js). Node 18+ has a global fetch(), which Emscripten 3.1.6
// then uses for the .wasm path and fails on (a file path is not a URL): in node, read the .wasm
// beside this script unless the caller passed wasmBinary.
if (typeof process === 'object' && process.versions && process.versions.node && !Module['wasmBinary'] &&
    typeof require === 'function' && typeof __dirname === 'string') {
  try {
    Module['wasmBinary'] = require('fs').readFileSync(require('path').join(__dirname, 'bspkit_viewer.wasm'));
  } catch (e) {
  }
}
