// Appended to bspkit_viewer.js (--post-js): the contract's functions over the embind ones,
// with optional arguments optional and nothing thrown (a JS error becomes {error} too).
(function () {
  function safe(f) {
    return function () {
      try {
        return f.apply(null, arguments);
      } catch (e) {
        return { error: 'bspkit: ' + (e && e.message ? e.message : String(e)) };
      }
    };
  }
  Module['open'] = safe(function (name, bytes, progress, companions) {
    if (!(bytes instanceof Uint8Array)) return { error: String(name) + ': the bytes must be a Uint8Array' };
    if (companions !== undefined && companions !== null) {
      if (!Array.isArray(companions)) return { error: String(name) + ': companions must be an array of {path, bytes}' };
      for (var i = 0; i < companions.length; i++) {
        var c = companions[i];
        if (!c || typeof c.path !== 'string' || !(c.bytes instanceof Uint8Array))
          return { error: String(name) + ': companion ' + i + ' is not {path: string, bytes: Uint8Array}' };
      }
    }
    return Module['_bspkitOpen'](String(name), bytes, typeof progress === 'function' ? progress : null,
                                 companions && companions.length ? companions : null);
  });
  Module['scene'] = safe(function (options) { return Module['_bspkitScene'](options || {}); });
  Module['locate'] = safe(function (x, y, z) { return Module['_bspkitLocate'](+x, +y, +z); });
  Module['entities'] = safe(function () { return Module['_bspkitEntities'](); });
  Module['check'] = safe(function () { return Module['_bspkitCheck'](); });
  Module['close'] = safe(function () { Module['_bspkitClose'](); });
})();
