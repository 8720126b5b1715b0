// engine_check.mjs — parse `gputrace chrome` exports with Chrome DevTools' own
// trace engine (npm @paulirish/trace_engine), an importer we did not write.
//
// Usage: node engine_check.mjs ENGINE_DIR FILE.json[.gz]...
// For each file: the engine must not throw (it does on events without a
// name) nor log through console.error (it does on Begin/End mismatches); it
// must see every thread that has slices, with all of its slices, and every
// flow arrow. Prints PASS/FAIL per file; exits 1 if any failed.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import {pathToFileURL} from 'node:url';

const [engineDir, ...files] = process.argv.slice(2);
const logged = [];
const realError = console.error;
console.error = (...args) => logged.push(args.map(String).join(' '));

const {polyfillDOMRect} = await import(pathToFileURL(path.join(engineDir, 'analyze-trace.mjs')));
const Trace = await import(pathToFileURL(path.join(engineDir, 'models/trace/trace.js')));
polyfillDOMRect(); // the engine expects a browser's DOMRect

function load(file) {
  const raw = fs.readFileSync(file);
  const gzip = raw[0] === 0x1f && raw[1] === 0x8b;
  return JSON.parse((gzip ? zlib.gunzipSync(raw) : raw).toString('utf8'));
}

// What the export says the engine should find: slices per (pid, tid), arrows.
function expected(events) {
  const slices = new Map();
  let flows = 0;
  for (const e of events) {
    if (e.ph === 'X') {
      const key = `${e.pid}/${e.tid}`;
      slices.set(key, (slices.get(key) ?? 0) + 1);
    } else if (e.ph === 's') {
      flows++;
    }
  }
  return {slices, flows};
}

async function check(file) {
  const problems = [];
  logged.length = 0;
  const events = load(file).traceEvents;
  try {
    const model = Trace.TraceModel.Model.createWithAllHandlers();
    await model.parse(events);
    const parsed = model.parsedTrace();
    const want = expected(events);
    const got = new Map();
    for (const [pid, proc] of parsed.data.Renderer.processes) {
      for (const [tid, thread] of proc.threads) {
        if (thread.entries.length) got.set(`${pid}/${tid}`, thread.entries.length);
      }
    }
    for (const [key, n] of want.slices) {
      if (got.get(key) !== n) problems.push(`track ${key}: engine has ${got.get(key)} slices, file ${n}`);
    }
    for (const key of got.keys()) {
      if (!want.slices.has(key)) problems.push(`engine invented track ${key}`);
    }
    const flows = parsed.data.Flows.flows.length;
    if (flows !== want.flows) problems.push(`engine has ${flows} flows, file ${want.flows}`);
  } catch (e) {
    problems.push(`threw: ${e.stack ?? e}`);
  }
  for (const line of logged) problems.push(`console.error: ${line}`);
  const summary = `${events.length} events`;
  console.log(`${problems.length ? 'FAIL' : 'PASS'} ${path.basename(file)} (${summary})`);
  for (const p of problems.slice(0, 20)) console.log(`  ${p}`);
  return problems.length === 0;
}

let failed = 0;
for (const file of files) {
  if (!(await check(file))) failed++;
}
console.error = realError;
console.log(`${files.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
