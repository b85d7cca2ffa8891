// load.test.js — the load check: a library that lacks an export fails
// require('zlink') with that export's name; one of another major version
// fails with both versions; with no host running the process exits.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const lib = path.join(__dirname, '..', 'lib');

function run(env, code) {
  return spawnSync(process.execPath, ['-e', code], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 60000,
  });
}

test('a library without zlink_host_start fails the load with that name', () => {
  assert.ok(process.env.ZLINK_TEST_FAKE_MISSING, 'the fake library is given');
  const r = run({ ZLINK_LIBRARY: process.env.ZLINK_TEST_FAKE_MISSING }, `require(${JSON.stringify(lib)})`);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /lacks the export zlink_host_start\b/);
});

test('a library of another major version fails the load', () => {
  const r = run({ ZLINK_LIBRARY: process.env.ZLINK_TEST_FAKE_MAJOR }, `require(${JSON.stringify(lib)})`);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /is version 2\.0\.0; this binding needs major 1/);
});

test('a missing library fails the load with its path', () => {
  const r = run({ ZLINK_LIBRARY: '/nonexistent/libzlink.so.1' }, `require(${JSON.stringify(lib)})`);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /cannot load \/nonexistent\/libzlink\.so\.1/);
});

test('the real library loads, and the process exits once its hosts shut down', () => {
  const code = `
    const z = require(${JSON.stringify(lib)});
    const s = new z.Host('exit-srv').addCsServer('svc', 'inproc://exit-test');
    s.handle({ channel: 'svc' }, 'request', 'x', () => 1);
    s.start();
    if (z.diagnostics().outstanding !== 1) throw new Error('a serving host holds the loop');
    const c = new z.Host('exit-cli').addCsClient('svc', 'inproc://exit-test').start();
    c.requestToChannel('svc').json('x', {}).timeout(5000).submit().then(async (r) => {
      await c.shutdown(); await s.shutdown();
      console.log('done', z.diagnostics().outstanding);
    });`;
  const r = run({}, code);
  assert.equal(r.error, undefined, 'the process exited by itself');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'done 0');
});
