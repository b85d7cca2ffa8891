// runner.js — the Node.js conformance runner (doc/conformance.md).
//
//   runner [-v] MANIFEST [CASE-ID ...]   runs every case, or the ones named
//   runner --check MANIFEST              checks the manifest against the runner
//   runner --list MANIFEST               prints the manifest's ids
//
// stdout: one "CASE <id> pass|fail|missing|absent-by-seed <detail>" line per
// case in manifest order, "ERROR <text>" for manifest or registry problems;
// everything else goes to stderr. Exit 0 when every case run passed, 1 when
// one failed or is missing, 2 for usage, manifest or registry errors.
//
// Each case runs in a child process (this file again, "--run-case ID
// MANIFEST"), which passes when it prints the completion mark and exits 0
// within 60 s x ZT_TIMEOUT_MULT. Cases use the binding's public API only
// (require('zlink') from bindings/node/lib). The manifest is read with
// JSON.parse; a case's parameters come from it only.
'use strict';
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');

const CASE_SECONDS = 60;
const DONE_MARK = 'conformance: case completed: ';
const EXIT_OK = 0;
const EXIT_CASES = 1;
const EXIT_USAGE = 2;

// id -> body, from the case files (cases_x.js holds ).
const reasons = new Map();

function registry(manifestCases = []) {
  const cases = new Map();
  for (const file of ['cases_sc.js', 'cases_jq.js', 'cases_pl.js']) {
    const mod = require(path.join(__dirname, file));
    for (const [id, why] of Object.entries(mod.reasons || {})) reasons.set(id, why);
    for (const [id, body] of Object.entries(mod.cases)) {
      if (cases.has(id)) throw new Error(`case ${id} is registered twice in the Node runner`);
      cases.set(id, body);
    }
  }
  const { extras } = require(path.join(__dirname, 'cases_x.js'));
  for (const [id, body] of Object.entries(extras)) {
    if (cases.has(id)) throw new Error(`case ${id} is registered twice in the Node runner`);
    cases.set(id, body);
  }
  return cases;
}

function idWellFormed(id) {
  return /^[A-Z]+-[0-9]+$/.test(id);
}

function nonEmpty(v) {
  return typeof v === 'string' && v.length > 0;
}

// The manifest: { cases: [...] } (+ "about"); problems as ERROR texts.
function loadManifest(file) {
  const errors = [];
  let root;
  try {
    root = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    return { cases: [], errors: [`${file}: ${e.message}`] };
  }
  if (root === null || typeof root !== 'object' || !Array.isArray(root.cases)) {
    return { cases: [], errors: [`${file}: the top level must be an object with a "cases" array`] };
  }
  for (const k of Object.keys(root)) {
    if (k !== 'cases' && k !== 'about') errors.push(`${file}: unknown top-level member "${k}"`);
  }
  const cases = [];
  const seen = new Set();
  root.cases.forEach((c, i) => {
    if (c === null || typeof c !== 'object' || Array.isArray(c)) {
      errors.push(`${file}: case ${i + 1} is not an object`);
      return;
    }
    if (!nonEmpty(c.id) || !idWellFormed(c.id)) {
      errors.push(`${file}: case ${i + 1} has no id of the form X-1 (capitals, a dash, digits)`);
      return;
    }
    if (!nonEmpty(c.title) || !nonEmpty(c.seed)) errors.push(`${file}: case ${c.id} needs a non-empty "title" and "seed"`);
    if (c.params === null || typeof c.params !== 'object' || Array.isArray(c.params)) errors.push(`${file}: case ${c.id} needs a "params" object`);
    if (c.later !== undefined) {
      const ok = Array.isArray(c.later) && c.later.length > 0 && c.later.every((e) =>
        e && typeof e === 'object' && Object.keys(e).length === 2 && nonEmpty(e.part) && nonEmpty(e.needs));
      if (!ok) errors.push(`${file}: case ${c.id}: "later" must be a non-empty array of {"part", "needs"}`);
    }
    if (c.absent !== undefined) {
      const ok = c.absent && typeof c.absent === 'object' && !Array.isArray(c.absent) &&
        Object.values(c.absent).every(nonEmpty);
      if (!ok) errors.push(`${file}: case ${c.id}: "absent" must map languages to reasons`);
    }
    for (const k of Object.keys(c)) {
      if (!['id', 'title', 'seed', 'params', 'later', 'absent'].includes(k)) errors.push(`${file}: case ${c.id} has an unknown member "${k}"`);
    }
    if (seen.has(c.id)) errors.push(`${file}: duplicate case id ${c.id}`);
    seen.add(c.id);
    cases.push(c);
  });
  if (cases.length === 0 && errors.length === 0) errors.push(`${file}: the manifest lists no case`);
  return { cases, errors };
}

function timeoutMult() {
  const v = Number(process.env.ZT_TIMEOUT_MULT);
  return v > 0 ? v : 1;
}

// ------------------------------------------------------------ the child

async function runCaseHere(id, file) {
  const { cases, errors } = loadManifest(file);
  const entry = cases.find((c) => c.id === id);
  const body = registry(cases).get(id);
  if (errors.length || !entry || !body) {
    process.stderr.write(`${id}: not in the manifest or not implemented\n`);
    process.exit(EXIT_USAGE);
  }
  const ctx = require('./check').context(entry);
  let completed = false;
  process.on('beforeExit', () => {
    if (!completed) process.stdout.write('the event loop ran out of work before the case completed (a Promise it awaits never settled)\n');
  });
  try {
    const r = await body(entry.params, ctx);
    if (r && r.absent) process.stdout.write(`conformance: absent-by-seed: ${r.absent}\n`);
  } catch (e) {
    process.stdout.write(`${e && e.where ? e.where + ': ' : ''}${(e && e.message) || e}\n`);
    if (e && e.stack) process.stderr.write(`${e.stack}\n`);
    process.exit(1);
  }
  completed = true;
  process.stdout.write(`${DONE_MARK}${id}\n`);
  // Hosts a failed body left serving would keep the loop alive; a passed
  // body shut its hosts down, so the natural exit is the check.
}

// ----------------------------------------------------------- the parent

function runCaseChild(id, file, absentAllowed) {
  return new Promise((resolve) => {
    const start = Date.now();
    const child = spawn(process.execPath, [__filename, '--run-case', id, file], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, CASE_SECONDS * 1000 * timeoutMult());
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const elapsed = Date.now() - start;
      const lines = out.split('\n').filter((l) => l.length > 0);
      const why = lines.find((l) => /^[^:\s]+:\d+: /.test(l)) || lines.filter((l) => !l.startsWith('    at ')).slice(-1)[0] || '';
      const absent = lines.find((l) => l.startsWith('conformance: absent-by-seed: '));
      const done = out.includes(`${DONE_MARK}${id}\n`);
      let status, detail;
      if (timedOut) [status, detail] = ['fail', `timed out after ${elapsed} ms: ${why}`];
      else if (signal) [status, detail] = ['fail', `killed by signal ${signal}: ${why}`];
      else if (code !== 0) [status, detail] = ['fail', `exit ${code}: ${why}`];
      else if (!done) [status, detail] = ['fail', `ended without completing the case: ${why}`];
      else if (absent && !absentAllowed) [status, detail] = ['fail', 'the case claims absent-by-seed but the manifest has no "absent" entry for node'];
      else if (absent) [status, detail] = ['absent-by-seed', absent.slice('conformance: absent-by-seed: '.length)];
      else [status, detail] = ['pass', `${elapsed} ms`];
      resolve({ status, detail: detail.replace(/\s+/g, ' ').slice(0, 240), output: out });
    });
  });
}

function echo(id, out) {
  if (!out) return;
  process.stderr.write(`---- output of ${id}\n`);
  for (const l of out.replace(/\n$/, '').split('\n')) process.stderr.write(`  | ${l}\n`);
}

function usage() {
  process.stderr.write('usage: runner [-v] MANIFEST [CASE-ID ...]\n       runner --check MANIFEST\n       runner --list MANIFEST\n');
  return EXIT_USAGE;
}

async function main(argv) {
  if (argv.length === 3 && argv[0] === '--run-case') {
    await runCaseHere(argv[1], argv[2]);
    return null;
  }
  let verbose = false, check = false, list = false, i = 0;
  for (; i < argv.length && argv[i].startsWith('-'); i++) {
    if (argv[i] === '-v') verbose = true;
    else if (argv[i] === '--check') check = true;
    else if (argv[i] === '--list') list = true;
    else return usage();
  }
  if (i >= argv.length || (check && list) || ((check || list) && argv.length - i !== 1)) return usage();
  const file = argv[i++];
  const wanted = argv.slice(i);
  const { cases, errors } = loadManifest(file);
  for (const e of errors) process.stdout.write(`ERROR ${e}\n`);
  if (errors.length) return EXIT_USAGE;
  if (list) {
    for (const c of cases) process.stdout.write(`${c.id}\n`);
    return EXIT_OK;
  }
  let problems = 0;
  let reg;
  try {
    reg = registry(cases);
  } catch (e) {
    process.stdout.write(`ERROR ${e.message}\n`);
    return EXIT_USAGE;
  }
  const ids = new Set(cases.map((c) => c.id));
  for (const id of reg.keys()) {
    if (!ids.has(id)) {
      process.stdout.write(`ERROR case ${id} is implemented by the Node runner but not in the manifest\n`);
      problems++;
    }
  }
  for (const w of wanted) {
    if (!ids.has(w)) {
      process.stdout.write(`ERROR case ${w} is not in the manifest\n`);
      problems++;
    }
  }
  let pass = 0, fail = 0, missing = 0, absent = 0;
  for (const c of cases) {
    if (wanted.length && !wanted.includes(c.id)) continue;
    if (!reg.has(c.id)) {
      process.stdout.write(`CASE ${c.id} missing ${reasons.get(c.id) || 'not implemented by the Node runner yet'}\n`);
      missing++;
      continue;
    }
    if (check) continue;
    const o = await runCaseChild(c.id, file, Boolean(c.absent && c.absent.node));
    process.stdout.write(`CASE ${c.id} ${o.status} ${o.detail}\n`);
    if (o.status === 'fail' || verbose) echo(c.id, o.output);
    if (o.status === 'pass') pass++;
    else if (o.status === 'absent-by-seed') absent++;
    else fail++;
  }
  if (check) process.stderr.write(`conformance (node): ${cases.length} cases in ${file}, ${cases.length - missing} implemented, ${missing} missing, ${problems} error(s)\n`);
  else process.stderr.write(`conformance (node): ${pass} pass, ${fail} fail, ${missing} missing, ${absent} absent-by-seed, ${problems} error(s)\n`);
  if (problems) return EXIT_USAGE;
  return fail + missing > 0 ? EXIT_CASES : EXIT_OK;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== null) process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`runner: ${e.stack || e}\n`);
    process.exitCode = EXIT_USAGE;
  },
);
