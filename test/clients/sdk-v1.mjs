// TypeScript SDK @modelcontextprotocol/sdk 1.32.2 (protocol 2025-11-25, its experimental tasks
// client) against taskgate's built-in example, over stdio (`taskgate dev --stdio`) and HTTP.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { assert, config, devArgs, engines, marker, serverCrash, serverEnv, show, sleep, textOf, watchWorkflow } from "./lib.mjs";

export const NAME = "sdk@1.32.2";

// What a client that runs tool calls as tasks declares: the tasks capability (taskgate offers
// 2025-11-25 tasks to clients that declare it).
const TASKS = { tasks: {} };

/**
 * Connects a 1.32.2 Client. mode "wait" serves --no-task-clients wait. Returns {client, close, log}:
 * log() is what a stdio server wrote to stderr, for failure messages.
 */
async function connect(transport, { capabilities = {}, mode = "handles", onElicit } = {}) {
  const client = new Client({ name: "taskgate-clients-sdk1", version: "1.32.2" }, { capabilities });
  if (onElicit) client.setRequestHandler(ElicitRequestSchema, (request) => onElicit(request.params));
  let stderr = "";
  let t;
  if (transport === "stdio") {
    t = new StdioClientTransport({
      command: config.bin,
      args: devArgs(...(mode === "wait" ? ["--no-task-clients", "wait"] : [])),
      env: serverEnv(getDefaultEnvironment()),
      stderr: "pipe",
    });
    t.stderr?.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
  } else {
    t = new StreamableHTTPClientTransport(new URL(mode === "wait" ? config.waitUrl : config.url));
  }
  try {
    await client.connect(t);
  } catch (e) {
    await client.close().catch(() => {});
    throw withLog(e, stderr);
  }
  return { client, close: () => client.close().catch(() => {}), log: () => stderr };
}

function withLog(e, stderr) {
  if (e instanceof Error && stderr) e.message += ` [server stderr: ${serverCrash(stderr)}]`;
  return e;
}

/** Runs fn with a connected client and closes it; failures carry a stdio server's last stderr lines. */
async function using(transport, opts, fn) {
  const c = await connect(transport, opts);
  try {
    return await fn(c.client);
  } catch (e) {
    throw withLog(e, c.log());
  } finally {
    await c.close();
  }
}

/** Drains a callToolStream into its messages. */
async function drain(stream) {
  const messages = [];
  for await (const m of stream) messages.push(m);
  return messages;
}

function summary(messages) {
  return messages.map((m) => (m.type === "taskStatus" ? `taskStatus:${m.task.status}` : m.type)).join(" > ");
}

/** An elicitation handler that approves, keeping what it was asked. */
function approver() {
  const asked = [];
  const onElicit = (params) => {
    asked.push(params);
    return { action: "accept", content: { approve: true, reason: "approved by the clients test" } };
  };
  return { asked, onElicit };
}

/**
 * The workflow approve_deployment asks "Deploy VERSION to ENV?" while it runs. On stdio taskgate
 * asks with elicitation/create: while tasks/result waits (tasks), or while the call waits.
 */
function askingChecks(c, engine) {
  const transport = "stdio";
  const approve = engine.tool("approve_deployment");
  return [
    c(`callToolStream ${approve}, answered through elicitation/create while tasks/result waits`, () => {
      const { asked, onElicit } = approver();
      return using(transport, { capabilities: { ...TASKS, elicitation: {} }, onElicit }, async (client) => {
        await client.listTools();
        const version = marker("sdk1-v");
        const messages = await drain(client.experimental.tasks.callToolStream({ name: approve, arguments: { version, env: "staging", stepSeconds: 0 } }));
        const created = messages.find((m) => m.type === "taskCreated");
        const last = messages.at(-1);
        assert(last?.type === "result", `stream ended ${show(last?.error?.message ?? last)} (${summary(messages)})`);
        assert(asked.length === 1 && asked[0].message === `Deploy ${version} to staging?` && asked[0].requestedSchema?.properties?.approve, `asked ${show(asked)}`);
        const related = asked[0]._meta?.["io.modelcontextprotocol/related-task"]?.taskId;
        assert(related && related === created?.task?.taskId, `the elicitation names task ${show(related)}, want ${show(created?.task?.taskId)}`);
        assert(last.result.structuredContent?.deployed === true, `result ${show(last.result)}, want deployed`);
        return `${summary(messages)}; asked ${show(asked[0].message)}; text ${show(textOf(last.result))}`;
      });
    }),
    c(`plain callTool ${approve} asks through elicitation/create while it waits (--no-task-clients wait)`, () => {
      const { asked, onElicit } = approver();
      return using(transport, { mode: "wait", capabilities: { elicitation: {} }, onElicit }, async (client) => {
        await client.listTools();
        const version = marker("sdk1-w");
        const result = await client.callTool({ name: approve, arguments: { version, env: "dev", stepSeconds: 0 } });
        assert(asked.length === 1 && asked[0].message === `Deploy ${version} to dev?`, `asked ${show(asked)}`);
        assert(!result.isError && result.structuredContent?.deployed === true, `the call answered ${show(result)}`);
        return `asked ${show(asked[0].message)}; text ${show(textOf(result))}`;
      });
    }),
  ];
}

function checksFor(transport, engine) {
  const c = (name, fn) => ({ client: NAME, transport, name, fn });
  const echo = engine.tool("wait_and_echo"),
    fail = engine.tool("wait_and_fail");
  const temporalOnly = (...checks) => (engine.name === "temporal" ? checks : []);
  return [
    ...temporalOnly(c("tools/list (declaring tasks)", () =>
      using(transport, { capabilities: TASKS }, async (client) => {
        const { tools } = await client.listTools();
        const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
        for (const n of ["wait_and_echo", "wait_and_fail", "quick_echo", "summarize_dataset"]) assert(byName[n], `tools/list lacks ${n}: ${show(tools.map((t) => t.name))}`);
        // On stdio the server knows this client declared tasks: a call without a task would be
        // refused, so the tool is required. Over stateless HTTP it knows nothing of initialize, and
        // a plain call gets a handle: the tool is optional to such a client.
        const want = transport === "stdio" ? "required" : "optional";
        assert(byName.wait_and_echo.execution?.taskSupport === want, `wait_and_echo execution ${show(byName.wait_and_echo.execution)}, want taskSupport ${want}`);
        return `${tools.length} tools, wait_and_echo taskSupport ${byName.wait_and_echo.execution.taskSupport}`;
      }),
    )),

    c(`callToolStream ${echo}`, () =>
      using(transport, { capabilities: TASKS }, async (client) => {
        await client.listTools(); // the SDK learns which tools take tasks from the list
        const text = marker("sdk1-echo");
        const messages = await drain(client.experimental.tasks.callToolStream({ name: echo, arguments: { seconds: 1, text } }));
        const last = messages.at(-1);
        assert(messages[0]?.type === "taskCreated", `first message ${show(messages[0])}, want taskCreated (${summary(messages)})`);
        assert(last?.type === "result", `stream ended ${show(last?.error?.message ?? last)} (${summary(messages)})`);
        assert(last.result.structuredContent?.text === text, `result ${show(last.result)}, want structuredContent.text ${text}`);
        assert(textOf(last.result).includes(text), `result text ${show(textOf(last.result))} lacks ${text}`);
        return `${summary(messages)}; text ${show(last.result.structuredContent.text)}`;
      }),
    ),

    ...(transport === "stdio" ? askingChecks(c, engine) : []),

    c(`callToolStream ${fail}`, () =>
      using(transport, { capabilities: TASKS }, async (client) => {
        await client.listTools();
        const reason = marker("sdk1-reason");
        const messages = await drain(client.experimental.tasks.callToolStream({ name: fail, arguments: { seconds: 1, reason } }));
        const created = messages.find((m) => m.type === "taskCreated");
        const last = messages.at(-1);
        assert(created, `no taskCreated (${summary(messages)})`);
        // On 2025-11-25 an isError result makes the task failed; the stream then ends in an error
        // and tasks/result gives the call's result, the reason included.
        assert(last?.type === "error" && messages.at(-2)?.task?.status === "failed", `stream ${summary(messages)}; want it to end failed (last: ${show(last)})`);
        const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
        assert(result.isError === true && textOf(result).includes(reason), `tasks/result ${show(result)}, want isError with ${reason}`);
        return `${summary(messages)}; tasks/result isError, text ${show(textOf(result), 120)}`;
      }),
    ),

    c(`cancel a running task (${echo})`, () =>
      using(transport, { capabilities: TASKS }, async (client) => {
        await client.listTools();
        const stream = client.experimental.tasks.callToolStream({ name: echo, arguments: { seconds: 120, text: "never" } });
        const seen = [];
        let cancelled;
        for await (const m of stream) {
          seen.push(m);
          if (m.type === "taskCreated") cancelled = await client.experimental.tasks.cancelTask(m.task.taskId);
        }
        const last = seen.at(-1);
        assert(cancelled, `no taskCreated (${summary(seen)})`);
        assert(cancelled.status === "cancelled", `tasks/cancel answered ${show(cancelled)}, want status cancelled`);
        assert(last?.type === "error" && /cancel/i.test(last.error?.message ?? ""), `stream ${summary(seen)} ended ${show(last?.error?.message ?? last)}, want the cancellation`);
        const task = await client.experimental.tasks.getTask(cancelled.taskId);
        assert(task.status === "cancelled", `tasks/get after cancel: ${show(task)}`);
        return `tasks/cancel -> ${cancelled.status}; ${summary(seen)}; tasks/get ${task.status}`;
      }),
    ),

    // A client that declares no tasks capability and asks for a task explicitly, as the SDK's own
    // task client example (simpleTaskInteractiveClient) does: in 2025-11-25 the client's `tasks`
    // capability is about requests the client receives, and the `task` option is the request.
    c(`callToolStream ${echo} with an explicit task option, client declares no tasks capability (as the SDK's task client example)`, () =>
      using(transport, { capabilities: { elicitation: {}, sampling: {} } }, async (client) => {
        await client.listTools();
        const text = marker("sdk1-nocap");
        const messages = await drain(client.experimental.tasks.callToolStream({ name: echo, arguments: { seconds: 1, text } }, CallToolResultSchema, { task: { ttl: 60000 } }));
        const last = messages.at(-1);
        assert(messages[0]?.type === "taskCreated", `first message ${show(messages[0])}, want taskCreated (${summary(messages)})`);
        assert(last?.type === "result" && last.result.structuredContent?.text === text, `stream ${summary(messages)} ended ${show(last?.result ?? last?.error?.message ?? last)}, want the echoed text ${text}`);
        return `${summary(messages)}; text ${show(last.result.structuredContent.text)}`;
      }),
    ),

    c(`plain callTool ${echo} -> handle -> task_result (default --no-task-clients handles)`, () =>
      using(transport, {}, async (client) => {
        const { tools } = await client.listTools();
        for (const n of ["task_status", "task_result", "task_cancel"]) assert(tools.some((t) => t.name === n), `tools/list lacks ${n}: ${show(tools.map((t) => t.name))}`);
        const text = marker("sdk1-handle");
        const started = await client.callTool({ name: echo, arguments: { seconds: 1, text } });
        const handle = started.structuredContent?.handle;
        assert(!started.isError && typeof handle === "string", `the call answered ${show(started)}, want a handle`);
        let status;
        for (let i = 0; i < 60; i++) {
          status = await client.callTool({ name: "task_status", arguments: { handle } });
          if (status.structuredContent?.status !== "working") break;
          await sleep(500);
        }
        assert(status.structuredContent?.status === "completed", `task_status ${show(status)}, want completed`);
        const result = await client.callTool({ name: "task_result", arguments: { handle } });
        assert(!result.isError && result.structuredContent?.text === text && textOf(result).includes(text), `task_result ${show(result)}, want the echoed ${text}`);
        return `handle, task_status completed, task_result text ${show(result.structuredContent.text)}`;
      }),
    ),

    c(`plain callTool ${echo} waits for the result (--no-task-clients wait)`, () =>
      using(transport, { mode: "wait" }, async (client) => {
        const { tools } = await client.listTools();
        assert(!tools.some((t) => t.name === "task_result"), `wait mode lists the handle tools: ${show(tools.map((t) => t.name))}`);
        const text = marker("sdk1-wait");
        const t0 = Date.now();
        const result = await client.callTool({ name: echo, arguments: { seconds: 1, text } });
        assert(!result.isError && result.structuredContent?.text === text && textOf(result).includes(text), `the call answered ${show(result)}, want the echoed ${text}`);
        assert(Date.now() - t0 >= 1000, `answered after ${Date.now() - t0} ms, before the workflow's 1 s wait`);
        return `text ${show(result.structuredContent.text)} after ${((Date.now() - t0) / 1000).toFixed(1)} s`;
      }),
    ),

    c(`plain callTool ${fail} waits for the failure (--no-task-clients wait)`, () =>
      using(transport, { mode: "wait" }, async (client) => {
        await client.listTools(); // as a client does before it calls
        const reason = marker("sdk1-waitfail");
        const result = await client.callTool({ name: fail, arguments: { seconds: 0.5, reason } });
        assert(result.isError === true && textOf(result).includes(reason), `the call answered ${show(result)}, want isError with ${reason}`);
        return `isError, text ${show(textOf(result), 120)}`;
      }),
    ),

    // A client without tasks can only stop a waiting call by abandoning it, and the workflow behind
    // the call must then end cancelled, not run on unseen. On stdio the SDK's per-request abort
    // sends notifications/cancelled for the request. Over HTTP this SDK's abort only sends
    // notifications/cancelled in a new POST and leaves the request open (its POSTs use the
    // transport's AbortController, aborted by close(); a stateless server cannot tie that
    // notification to a request), so there the client abandons the call by closing: the request's
    // connection closes.
    ...temporalOnly(c(`abandoning a waiting call cancels its workflow (--no-task-clients wait; ${transport === "stdio" ? "AbortSignal: notifications/cancelled" : "client.close(): the request closes"})`, () =>
      using(transport, { mode: "wait" }, async (client) => {
        const text = marker("sdk1-abandon");
        const since = Date.now();
        const abort = new AbortController();
        const call = client.callTool({ name: "wait_and_echo", arguments: { seconds: 120, text } }, undefined, { signal: abort.signal, timeout: 180000 });
        call.catch(() => {});
        const running = await watchWorkflow("WaitAndEcho", text, since, (wf) => wf.status === "RUNNING");
        assert(running?.status === "RUNNING", `the waiting call started no running workflow: ${show(running)}`);
        if (transport === "stdio") abort.abort("the user gave up");
        else await client.close();
        const ended = await watchWorkflow("WaitAndEcho", text, since, (wf) => wf.status !== "RUNNING");
        assert(ended.status === "CANCELED", `after the client abandoned the call its workflow is ${ended.status}, want CANCELED (${ended.workflowId})`);
        return `workflow ${ended.status}`;
      }),
    )),

    ...temporalOnly(c("plain callTool quick_echo (sync tool)", () =>
      using(transport, {}, async (client) => {
        await client.listTools();
        const text = marker("sdk1-quick");
        const result = await client.callTool({ name: "quick_echo", arguments: { text } });
        assert(!result.isError && textOf(result).includes(text), `quick_echo answered ${show(result)}`);
        return `text ${show(textOf(result), 120)}`;
      }),
    )),
  ];
}

export const checks = engines.flatMap((e) => [...checksFor("stdio", e), ...checksFor("http", e)]);
