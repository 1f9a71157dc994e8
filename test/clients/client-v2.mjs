// TypeScript client @modelcontextprotocol/client 2.4.0 with @modelcontextprotocol/ext-tasks 0.2.2 on
// protocol 2026-07-28 (the tasks extension), over HTTP and stdio.
//
// ext-tasks needs the host's raw request path for the extension's tools/call and tasks/* traffic
// (the 2.4.0 Client rejects resultType "task" by design: see ext-tasks' RawClientDispatch). The
// host coordinator below sends those requests through the Client's own connected transport, with
// request ids of its own, and takes their responses off the transport before the Client sees
// them; everything else (connect, server/discover, tools/list, plain calls) is the Client's.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";

import { assert, config, devArgs, engines, marker, sfnEngine, serverCrash, serverEnv, show, sleep, textOf } from "./lib.mjs";

export const NAME = "client@2.4.0+ext-tasks@0.2.2";
const VERSION = "2026-07-28";
const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
const clientInfo = { name: "taskgate-clients-v2", version: "2.4.0" };
const clientCapabilities = { extensions: { [TASKS_EXTENSION]: {} } };

/**
 * A host request coordinator on a connected transport: sends a JSON-RPC request with an id the
 * Client never uses and resolves with its response, which it keeps from the Client.
 */
function rawCoordinator(transport) {
  const pending = new Map();
  let next = 0;
  const clientHandler = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message && typeof message === "object" && !("method" in message) && pending.has(message.id)) {
      const resolve = pending.get(message.id);
      pending.delete(message.id);
      resolve(message);
      return;
    }
    clientHandler?.call(transport, message, extra);
  };
  return async (request, options = {}) => {
    const id = `taskgate-clients-raw-${++next}`;
    const response = new Promise((resolve, reject) => {
      pending.set(id, resolve);
      options.signal?.addEventListener("abort", () => {
        pending.delete(id);
        reject(options.signal.reason ?? new Error("aborted"));
      });
    });
    await transport.send({ jsonrpc: "2.0", id, ...request }, options.context?.headers ? { headers: options.context.headers } : undefined);
    const message = await response;
    return "error" in message ? { kind: "error", error: message.error } : { kind: "result", result: message.result };
  };
}

async function connect(transport, { onInputRequest } = {}) {
  const capabilities = onInputRequest ? { ...clientCapabilities, elicitation: {} } : clientCapabilities;
  const client = new Client(clientInfo, { capabilities, versionNegotiation: { mode: { pin: VERSION } } });
  let stderr = "";
  let t;
  if (transport === "stdio") {
    t = new StdioClientTransport({ command: config.bin, args: devArgs(), env: serverEnv(getDefaultEnvironment()), stderr: "pipe" });
    t.stderr?.on("data", (d) => (stderr = (stderr + d).slice(-8000)));
  } else {
    t = new StreamableHTTPClientTransport(new URL(config.url));
  }
  const crash = (e) => {
    if (e instanceof Error && stderr) e.message += ` [server stderr: ${serverCrash(stderr)}]`;
    return e;
  };
  try {
    await client.connect(t);
  } catch (e) {
    await client.close().catch(() => {});
    throw crash(e);
  }
  const session = createTaskSessionFromClient(client, {
    endpointId: `taskgate-${transport}`,
    rawDispatch: rawCoordinator(t),
    v2RequestFraming: { protocolVersion: VERSION, clientInfo, clientCapabilities: capabilities },
    ...(onInputRequest ? { onInputRequest } : {}),
  });
  return {
    client,
    session,
    crash,
    close: async () => {
      await session.close().catch(() => {});
      await client.close().catch(() => {});
    },
  };
}

async function using(transport, fn, options) {
  const c = await connect(transport, options);
  try {
    return await fn(c);
  } catch (e) {
    throw c.crash(e);
  } finally {
    await c.close();
  }
}

/** Settles an execution, keeping the statuses its polls saw. */
async function settle(execution) {
  const statuses = [];
  const { outcome } = await execution.settle({
    onEvent: (event) => {
      if (event.type === "task") statuses.push(event.task.status);
    },
  });
  return { outcome, statuses };
}

/** A listen (client.listen with the extension's taskIds) that receives the task to its end. */
function listenCheck(transport, echo) {
  return check(transport, `listen: notifications/tasks to the end: ${echo}`, () =>
    using(transport, async ({ client, session }) => {
      const text = marker("v2-listen");
      const execution = await session.callTool(echo, { seconds: 2, text });
      assert(execution.kind === "task", `the call answered ${execution.kind}, want a task`);
      const taskId = execution.handle.taskId;
      const statuses = [];
      let ended;
      const end = new Promise((resolve) => (ended = resolve));
      // notifications/tasks is the extension's: the Client hands it to the fallback handler. (Its
      // honoredFilter keeps only the filter members it knows, so it cannot show taskIds.)
      client.fallbackNotificationHandler = async (n) => {
        if (n.method !== "notifications/tasks" || n.params?.taskId !== taskId) return;
        statuses.push(n.params.status);
        if (!["working", "input_required"].includes(n.params.status)) ended(n.params);
      };
      const subscription = await client.listen({ taskIds: [taskId] });
      try {
        const timeout = sleep(30000).then(() => ({ timedOut: true }));
        const task = await Promise.race([end, timeout]);
        assert(!task.timedOut, `no end notified within 30 s; notified ${show(statuses)}`);
        assert(task.status === "completed" && task.result?.structuredContent?.text === text, `notified end ${show(task)}, want completed with the echoed ${text}`);
        // Settle the execution too: ext-tasks rejects an unsettled one when its session closes.
        await settle(execution);
        return `notified ${statuses.join(" > ")}; text ${show(task.result.structuredContent.text)}`;
      } finally {
        await subscription.close();
      }
    }),
  );
}

const check = (transport, name, fn) => ({ client: NAME, transport, name, fn });

function checksFor(transport, engine) {
  const c = (name, fn) => check(transport, name, fn);
  const echo = engine.tool("wait_and_echo"),
    fail = engine.tool("wait_and_fail"),
    approve = engine.tool("approve_deployment");
  const temporalOnly = (...checks) => (engine.name === "temporal" ? checks : []);
  return [
    ...temporalOnly(c("server/discover + tools/list on 2026-07-28", () =>
      using(transport, async ({ client, session }) => {
        assert(client.getProtocolEra() === "modern", `protocol era ${client.getProtocolEra()}, want modern`);
        assert(session.capabilities.execution, `ext-tasks sees no task support: ${show(session.capabilities)}`);
        const { tools } = await client.listTools();
        for (const n of ["wait_and_echo", "wait_and_fail", "quick_echo"]) assert(tools.some((t) => t.name === n), `tools/list lacks ${n}: ${show(tools.map((t) => t.name))}`);
        return `era modern, tasks extension, ${tools.length} tools`;
      }),
    )),

    c(`call, poll, result: ${echo}`, () =>
      using(transport, async ({ session }) => {
        const text = marker("v2-echo");
        const execution = await session.callTool(echo, { seconds: 1, text });
        assert(execution.kind === "task", `the call answered ${execution.kind}, want a task`);
        const { outcome, statuses } = await settle(execution);
        assert(outcome.status === "completed", `outcome ${show(outcome)}, want completed`);
        assert(statuses.includes("working"), `polls saw ${show(statuses)}, want working first`);
        assert(outcome.result.structuredContent?.text === text && textOf(outcome.result).includes(text), `result ${show(outcome.result)}, want the echoed ${text}`);
        return `task ${statuses.join(" > ")}; text ${show(outcome.result.structuredContent.text)}`;
      }),
    ),

    listenCheck(transport, echo),

    c(`failure: ${fail}`, () =>
      using(transport, async ({ session }) => {
        const reason = marker("v2-reason");
        const execution = await session.callTool(fail, { seconds: 1, reason });
        assert(execution.kind === "task", `the call answered ${execution.kind}, want a task`);
        const { outcome, statuses } = await settle(execution);
        // On 2026-07-28 a failed workflow is a completed task whose result is a tool error.
        assert(outcome.status === "completed" && outcome.result?.isError === true, `outcome ${show(outcome)}, want completed with an isError result`);
        assert(textOf(outcome.result).includes(reason), `result text ${show(textOf(outcome.result))} lacks the reason ${reason}`);
        return `task ${statuses.join(" > ")}; isError, text ${show(textOf(outcome.result), 120)}`;
      }),
    ),

    c(`cancel: ${echo}`, () =>
      using(transport, async ({ session }) => {
        const execution = await session.callTool(echo, { seconds: 120, text: "never" });
        assert(execution.kind === "task", `the call answered ${execution.kind}, want a task`);
        await execution.cancel();
        const { outcome } = await settle(execution);
        assert(outcome.status === "cancelled", `outcome ${show(outcome)}, want cancelled`);
        // ext-tasks settles the execution locally once tasks/cancel is acknowledged; cancellation is
        // cooperative, so the task itself reaches cancelled a moment later: poll it there. Within
        // 20 s: every stdio check's `taskgate dev` runs a worker on the examples' task queue. A
        // worker that stops cancels its polls in flight, and the server may have handed one of
        // them a workflow task already; that task waits out the workflow task timeout (10 s)
        // before another worker gets it (servers from 1.32 avoid it, the CLI's 1.29 does not). So
        // a session ending while this one cancels delays the cancel by 10 s (seen in CI: 10.8 s).
        const controller = session.task(execution.handle.taskId);
        const seen = [];
        let view;
        for (let i = 0; i < 100; i++) {
          view = await controller.snapshot();
          if (seen.at(-1) !== view.status) seen.push(view.status);
          if (!["working", "input_required"].includes(view.status)) break;
          await sleep(200);
        }
        assert(view.status === "cancelled", `tasks/get after cancel: ${show(seen)}, last ${show(view.raw)}`);
        return `outcome cancelled; tasks/get ${seen.join(" > ")}`;
      }),
    ),

    c(`input_required answered through tasks/update: ${approve}`, () => {
      const asked = [];
      const onInputRequest = async (request) => {
        asked.push(request);
        return { action: "accept", content: { approve: true, reason: "approved by the clients test" } };
      };
      return using(
        transport,
        async ({ session }) => {
          const version = marker("v2-v");
          const execution = await session.callTool(approve, { version, env: "staging", stepSeconds: 0 });
          assert(execution.kind === "task", `the call answered ${execution.kind}, want a task`);
          const { outcome, statuses } = await settle(execution);
          assert(statuses.includes("input_required"), `polls saw ${show(statuses)}, want input_required`);
          assert(asked.length === 1 && asked[0].kind === "elicitation" && asked[0].params?.message === `Deploy ${version} to staging?`, `asked ${show(asked)}`);
          assert(outcome.status === "completed" && outcome.result?.structuredContent?.deployed === true, `outcome ${show(outcome)}, want completed and deployed`);
          return `task ${[...new Set(statuses)].join(" > ")}; asked ${show(asked[0].params.message)}; text ${show(textOf(outcome.result))}`;
        },
        { onInputRequest },
      );
    }),

    ...temporalOnly(c("plain Client.callTool quick_echo (sync tool)", () =>
      using(transport, async ({ client }) => {
        await client.listTools();
        const text = marker("v2-quick");
        const result = await client.callTool({ name: "quick_echo", arguments: { text } });
        assert(!result.isError && textOf(result).includes(text), `quick_echo answered ${show(result)}`);
        return `text ${show(textOf(result), 120)}`;
      }),
    )),
  ];
}

// Step Functions (the examples taskgate dev creates in the endpoint of --sfn-endpoint) is listened
// to as well: the other checks there are the Go client's (cmd/taskgate).
const listenToStepFunctions = (transport) => listenCheck(transport, sfnEngine.tool("wait_and_echo"));

export const checks = engines.flatMap((e) => [...checksFor("http", e), ...checksFor("stdio", e)]).concat(["http", "stdio"].map(listenToStepFunctions));
