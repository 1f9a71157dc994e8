// Shared pieces of the client harness: configuration from the environment, assertions, and the
// runner that prints one line per check.
import { spawn } from "node:child_process";

/** Configuration, set by scripts/clients. */
export const config = {
  // The taskgate binary; stdio checks spawn `taskgate dev --stdio [...]` with it.
  bin: need("TASKGATE_BIN"),
  // A running Temporal frontend: every taskgate dev process uses it (and runs its example worker).
  temporal: need("TEMPORAL_ADDRESS"),
  // MCP endpoints of `taskgate dev --http` in the default mode (handles) and under --no-task-clients wait.
  url: need("TASKGATE_URL"),
  waitUrl: need("TASKGATE_WAIT_URL"),
  // The Temporal CLI, to see what became of a workflow whose call a client abandoned.
  temporalCLI: need("TEMPORAL_CLI"),
  // A running Restate server with the example deployment: every taskgate dev serves its examples too.
  restateIngress: need("RESTATE_INGRESS_URL"),
  restateAdmin: need("RESTATE_ADMIN_URL"),
};

/**
 * The engines whose examples the checks call: the same example tools on each, the Restate ones
 * named with a prefix. Checks that need an engine's own tools (Temporal's quick_echo) or its own
 * client (the Temporal CLI) run on that engine only.
 */
export const engines = [
  { name: "temporal", tool: (n) => n },
  { name: "restate", tool: (n) => `restate_${n}` },
];

/** The Step Functions examples (taskgate dev --sfn-endpoint), listened to only. */
export const sfnEngine = { name: "stepfunctions", tool: (n) => `sfn_${n}` };

function need(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`clients: ${name} is not set (scripts/clients sets it)`);
    process.exit(2);
  }
  return v;
}

/** The environment for a stdio server: only what taskgate dev needs, as a client host would pass it. */
export function serverEnv(base) {
  return { ...base, TEMPORAL_ADDRESS: config.temporal, RESTATE_INGRESS_URL: config.restateIngress, RESTATE_ADMIN_URL: config.restateAdmin };
}

/** The arguments of `taskgate dev --stdio --restate`, with any extra flags. */
export function devArgs(...extra) {
  return ["dev", "--stdio", "--restate", "--sfn-endpoint", need("SFN_ENDPOINT"), ...extra];
}

/** The panic line of a Go server's stderr and the first frames after it, else its last lines, on one line. */
export function serverCrash(stderr) {
  const lines = stderr.split("\n");
  const i = lines.findIndex((l) => /^(panic:|fatal error:)/.test(l));
  return lines
    .slice(i < 0 ? -4 : i, i < 0 ? undefined : i + 8)
    .map((l) => l.trim())
    .filter(Boolean)
    .join(" | ");
}

export class CheckError extends Error {}

/** Fails the check with a message that says what was observed. */
export function fail(msg) {
  throw new CheckError(msg);
}

export function assert(cond, msg) {
  if (!cond) fail(typeof msg === "function" ? msg() : msg);
}

/** A short JSON rendering of a value for messages. */
export function show(v, max = 400) {
  let s;
  try {
    s = JSON.stringify(v);
  } catch {
    s = String(v);
  }
  if (s === undefined) s = String(v);
  return s.length > max ? s.slice(0, max) + "..." : s;
}

/** The text of a CallToolResult's text content blocks, joined. */
export function textOf(result) {
  return (result?.content ?? [])
    .filter((c) => c?.type === "text")
    .map((c) => c.text)
    .join("\n");
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/** A fresh text to echo, so one check never reads another's result. */
export function marker(what) {
  return `${what}-${Math.random().toString(36).slice(2, 10)}`;
}

/**
 * Runs a command to its end and returns {code, stdout, stderr}; kills it after timeoutMs.
 */
export function runCommand(cmd, args, { env, timeoutMs = 60000 } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "",
      stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    const t = setTimeout(() => {
      p.kill("SIGKILL");
      reject(new CheckError(`${cmd} ${args.join(" ")} did not finish within ${timeoutMs / 1000} s; stderr: ${stderr.slice(-600)}`));
    }, timeoutMs);
    p.on("error", (e) => {
      clearTimeout(t);
      reject(e);
    });
    p.on("close", (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Runs the checks with some concurrency (they mostly wait on workflows) and prints one line per
 * check as it ends: "ok" or "FAIL", client, transport, what was checked, and what was observed.
 * Returns the number of failed checks.
 */
export async function runChecks(checks, { concurrency = 4, timeoutMs = 90000, filter } = {}) {
  const selected = filter ? checks.filter((c) => `${c.client} ${c.transport} ${c.name}`.includes(filter)) : checks;
  const width = Math.max(...selected.map((c) => c.client.length));
  let failed = 0,
    next = 0;
  const started = Date.now();
  async function worker() {
    while (next < selected.length) {
      const c = selected[next++];
      const t0 = Date.now();
      let status = "ok  ",
        detail;
      let timer;
      try {
        detail = await Promise.race([
          c.fn(),
          new Promise((_, rej) => {
            timer = setTimeout(() => rej(new CheckError(`no outcome within ${timeoutMs / 1000} s`)), timeoutMs);
          }),
        ]);
      } catch (e) {
        status = "FAIL";
        failed++;
        detail = e instanceof CheckError ? e.message : `${e?.name ?? "Error"}: ${e?.message ?? e}${e?.code !== undefined ? ` (code ${e.code})` : ""}${e?.data !== undefined ? ` data ${show(e.data)}` : ""}`;
      } finally {
        clearTimeout(timer);
      }
      const secs = ((Date.now() - t0) / 1000).toFixed(1);
      console.log(`${status} ${c.client.padEnd(width)}  ${c.transport.padEnd(5)}  ${c.name}: ${detail ?? ""} (${secs} s)`);
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, selected.length) }, worker));
  console.log(`clients: ${selected.length - failed} of ${selected.length} checks passed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return failed;
}

/**
 * The workflow of the given type, started after `since`, whose input contains `marker`, as
 * {workflowId, status} (status like "RUNNING", "CANCELED"), or undefined. Asks the Temporal server
 * directly (Temporal CLI), since a call a client abandoned left the client no task id to ask with.
 */
export async function findWorkflow(type, marker, since) {
  const cli = (...args) => runCommand(config.temporalCLI, [...args, "--address", config.temporal, "-o", "json"], { timeoutMs: 20000 });
  const listed = await cli("workflow", "list", "--limit", "200", "--query", `WorkflowType='${type}' AND StartTime >= '${new Date(since - 2000).toISOString()}'`);
  if (listed.code !== 0) fail(`temporal workflow list: ${listed.stderr.trim()}`);
  for (const wf of JSON.parse(listed.stdout || "[]")) {
    const shown = await cli("workflow", "show", "-w", wf.execution.workflowId, "-r", wf.execution.runId);
    if (shown.code !== 0) continue;
    const payload = JSON.parse(shown.stdout).events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
    if (payload && Buffer.from(payload, "base64").toString("utf8").includes(marker)) {
      return { workflowId: wf.execution.workflowId, status: String(wf.status).replace("WORKFLOW_EXECUTION_STATUS_", "") };
    }
  }
  return undefined;
}

/** Polls findWorkflow until `until(wf)` holds or timeoutMs passes; returns the last one seen. */
export async function watchWorkflow(type, marker, since, until, timeoutMs = 20000) {
  let wf;
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(300)) {
    wf = await findWorkflow(type, marker, since);
    if (wf && until(wf)) break;
  }
  return wf;
}
