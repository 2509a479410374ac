#!/usr/bin/env node
// Validates glTF 2.0 files with the Khronos glTF-Validator (npm package
// "gltf-validator", installed here by `make deps` with `npm ci`).
//
//   node tools/gltf-validator/validate.mjs FILE.glb|FILE.gltf [FILE...] [--max-issues N] [--quiet]
//
// Prints one JSON report per file (a JSON array when several files are
// given) and exits 0 when no report has an error, 1 when one has, 2 when a
// file cannot be read or is not glTF at all. External resources (.bin,
// images) are loaded relative to the file and must stay inside its folder.
import fs from 'node:fs';
import path from 'node:path';
import validator from 'gltf-validator';

const args = process.argv.slice(2);
let maxIssues = 0;
let quiet = false;
const files = [];
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--max-issues') maxIssues = Number(args[++i]);
  else if (args[i] === '--quiet') quiet = true;
  else if (args[i] === '--help' || args[i] === '-h') {
    console.log('usage: validate.mjs FILE.glb|FILE.gltf [FILE...] [--max-issues N] [--quiet]');
    process.exit(0);
  } else files.push(args[i]);
}
if (files.length === 0) {
  console.error('usage: validate.mjs FILE.glb|FILE.gltf [FILE...] [--max-issues N] [--quiet]');
  process.exit(2);
}

async function validate(file) {
  const full = path.resolve(file);
  const dir = path.dirname(full);
  const bytes = new Uint8Array(fs.readFileSync(full));
  return validator.validateBytes(bytes, {
    uri: path.basename(full),
    maxIssues,
    writeTimestamp: false,
    externalResourceFunction: (uri) => new Promise((resolve, reject) => {
      const target = path.resolve(dir, decodeURIComponent(uri));
      if (path.relative(dir, target).startsWith('..')) {
        reject(`resource ${uri} lies outside ${dir}`);
        return;
      }
      fs.readFile(target, (err, data) => (err ? reject(err.toString()) : resolve(new Uint8Array(data))));
    }),
  });
}

let status = 0;
const reports = [];
for (const file of files) {
  try {
    const report = await validate(file);
    reports.push(report);
    if (report.issues.numErrors > 0) status = Math.max(status, 1);
    if (!quiet)
      console.error(`${file}: ${report.issues.numErrors} errors, ${report.issues.numWarnings} warnings, ` +
                    `${report.issues.numInfos} infos, ${report.issues.numHints} hints`);
  } catch (error) {
    console.error(`${file}: cannot validate: ${error}`);
    reports.push({ uri: file, fatal: String(error) });
    status = 2;
  }
}
process.stdout.write(JSON.stringify(files.length === 1 ? reports[0] : reports, null, 2) + '\n');
process.exit(status);
