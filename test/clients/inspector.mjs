// MCP Inspector @modelcontextprotocol/inspector 2.12.0 in CLI mode (`mcp-inspector --cli`):
// tools/list (the Temporal and Restate examples) and tools/call of the sync tool quick_echo, over HTTP
// and stdio, in both protocol eras the Inspector speaks (legacy: initialize and 2025-11-25; modern:
// 2026-07-28).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { assert, config, devArgs, fail, marker, runCommand, show, textOf } from "./lib.mjs";

export const NAME = "inspector@2.12.0 --cli";
const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.join(here, "node_modules", ".bin", "mcp-inspector");

// The Inspector keeps a catalog and client config under the home folder: give it its own.
const home = fs.mkdtempSync(path.join(os.tmpdir(), "taskgate-inspector-"));
const env = {
  ...process.env,
  HOME: home,
  MCP_CATALOG_PATH: path.join(home, "mcp.json"),
  MCP_CLIENT_CONFIG_PATH: path.join(home, "client.json"),
};
process.on("exit", () => fs.rmSync(home, { recursive: true, force: true }));

/** Runs the Inspector CLI against taskgate and returns its JSON result. */
async function inspect(transport, era, args) {
  const target =
    transport === "stdio"
      ? ["-e", `TEMPORAL_ADDRESS=${config.temporal}`, "-e", `RESTATE_INGRESS_URL=${config.restateIngress}`, "-e", `RESTATE_ADMIN_URL=${config.restateAdmin}`, "--", config.bin, ...devArgs()]
      : [config.url];
  const { code, stdout, stderr } = await runCommand(bin, ["--cli", "--format", "json", "--protocol-era", era, ...args, ...target], { env, timeoutMs: 60000 });
  let out;
  try {
    out = JSON.parse(stdout);
  } catch {
    fail(`exit ${code}, stdout not JSON: ${show(stdout, 300)}; stderr: ${show(stderr.trim().split("\n").slice(-5).join(" | "), 600)}`);
  }
  if (code !== 0 || out.error) fail(`exit ${code}: ${show(out.error ?? out, 600)}; stderr: ${show(stderr.trim().split("\n").slice(-5).join(" | "), 600)}`);
  return out.result;
}

function checksFor(transport, era) {
  const c = (name, fn) => ({ client: NAME, transport, name: `${name} (${era === "modern" ? "2026-07-28" : "legacy, 2025-11-25"})`, fn });
  return [
    c("tools/list", async () => {
      const result = await inspect(transport, era, ["--method", "tools/list"]);
      const names = (result?.tools ?? []).map((t) => t.name);
      for (const n of ["quick_echo", "wait_and_echo", "restate_wait_and_echo"]) assert(names.includes(n), `tools/list gave ${show(names)}, lacks ${n}`);
      return `${names.length} tools: ${names.join(", ")}`;
    }),
    c("tools/call quick_echo", async () => {
      const text = marker("inspector");
      const result = await inspect(transport, era, ["--method", "tools/call", "--tool-name", "quick_echo", "--tool-args-json", JSON.stringify({ text })]);
      assert(!result?.isError && result?.structuredContent?.text === text && textOf(result).includes(text), `tools/call answered ${show(result)}, want the echoed ${text}`);
      return `text ${show(textOf(result), 120)}`;
    }),
  ];
}

export const checks = ["http", "stdio"].flatMap((t) => ["legacy", "modern"].flatMap((era) => checksFor(t, era)));
